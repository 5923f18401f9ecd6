// Creates sessions for one (agent, sender) pair in a shared directory, as fast as it can, and prints
// `ready` once open and `done <n>` at the end: run twice at once, the two must never share a file seq.
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";

const [dir, tag, count] = process.argv.slice(2);
const store = new JsonlStore({ path: dir!, onProblem: () => undefined });
process.stdout.write("ready\n");
await new Promise<void>((resolve) => process.stdin.once("data", () => resolve()));
const init = { agent: "crab", channel: "tg", createdBy: "TG:user-123" };
await Promise.all(
  Array.from({ length: Number(count) }, (_, i) =>
    store.append(`race:${tag}:${i}`, [{ type: "message", role: "user", content: `${tag} ${i}` }], { init }),
  ),
);
await store.close();
process.stdout.write(`done ${count}\n`);
