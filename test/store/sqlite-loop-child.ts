// Appends one message durably while the fault layer makes every fsync of the WAL slow, and prints what the
// event loop did before the append was acknowledged: a timer due long before the fsync ends, and a read.
import { rmSync, writeFileSync } from "node:fs";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";

const [path, arm, mode] = process.argv.slice(2) as [string, string, "thread" | "inline"];
const store = new SqliteStore({ path, writerThread: mode === "thread" });
const init = { agent: "main", channel: "t", createdBy: "u" };
await store.append("k", [{ type: "message", role: "user", content: "first" }], { init });
writeFileSync(arm, "");
const order: string[] = [];
const appended = store
  .append("k", [{ type: "message", role: "user", content: "second" }])
  .then(() => order.push("append"));
const timer = new Promise<void>((resolve) =>
  setTimeout(() => {
    order.push("timer");
    void store.getSession("k").then((session) => {
      order.push(`read ${session?.entryCount}`);
      resolve();
    });
  }, 20),
);
await Promise.all([appended, timer]);
rmSync(arm);
await store.close();
process.stdout.write(`${JSON.stringify({ order, threaded: store.sqlite.threaded })}\n`);
