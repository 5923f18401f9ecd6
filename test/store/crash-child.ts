// Appends to many sessions as fast as it can and prints each acknowledged append as
// `<key> <seq> <id>`; the parent kills it with SIGKILL mid-stream.
import { openStore, type StoreConfig } from "../../src/store/open.js";

const config = JSON.parse(process.argv[2] ?? "{}") as StoreConfig;
const store = await openStore(config);
const sessions = 20;
const payload = "x".repeat(200);

async function writer(n: number): Promise<never> {
  const key = `crash:${n}`;
  for (let i = 0; ; i++) {
    const { entries } = await store.append(
      key,
      [{ type: "message", role: "user", content: `${i} ${payload}` }],
      {
        init: {
          agent: "main",
          channel: "crash",
          createdBy: `u${n}`,
        },
      },
    );
    const entry = entries[0]!;
    process.stdout.write(`${key} ${entry.seq} ${entry.id}\n`);
  }
}

await Promise.all(Array.from({ length: sessions }, (_, n) => writer(n)));
