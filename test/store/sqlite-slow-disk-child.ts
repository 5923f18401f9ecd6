// Appends about 22 MB to a relaxed SQLite store, one commit at a time, while the fault layer makes every fsync
// of the database file slow (so each checkpoint holds the checkpoint lock that long), and prints the largest
// size the WAL file reached and the entry count.
import { statSync, writeFileSync } from "node:fs";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";

const [path, arm] = process.argv.slice(2) as [string, string];
const store = new SqliteStore({ path, durability: "relaxed" });
const init = { agent: "main", channel: "t", createdBy: "u" };
const body = "x".repeat(3_000);
writeFileSync(arm, "");
let largest = 0;
for (let i = 0; i < 1_800; i++) {
  await store.append(`k${i % 4}`, [{ type: "message", role: "user", content: `${body} ${i}` }], { init });
  largest = Math.max(largest, statSync(`${path}-wal`).size);
}
const counts = await Promise.all(
  [0, 1, 2, 3].map(async (k) => (await store.getSession(`k${k}`))!.entryCount),
);
await store.close();
process.stdout.write(`${JSON.stringify({ largest, counts })}\n`);
