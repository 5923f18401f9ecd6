// Creates sessions for one (agent, sender) pair in a shared directory, as fast as it can, and prints
// `ready` once open and `done <n>` at the end: run twice at once, the two must never share a file seq.
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";

const [dir, tag, count] = process.argv.slice(2);
const store = new JsonlStore({ path: dir!, onProblem: () => undefined });
process.stdout.write("ready\n");
await new Promise<void>((resolve) => process.stdin.once("data", () => resolve()));
// Keys of the `crabtalk` scope whose senders slug alike (`TG:user-123!`, `TG:user-123??`…) share CrabTalk's
// family `crab_tg-user-123`, as they do in CrabTalk.
await Promise.all(
  Array.from({ length: Number(count) }, (_, i) => {
    const createdBy = `TG:user-123${(tag === "a" ? "!" : "?").repeat(i + 1)}`;
    const init = { agent: "crab", channel: "tg", createdBy };
    const entry = { type: "message" as const, role: "user" as const, content: `${tag} ${i}` };
    return store.append(`crab:${createdBy}`, [entry], { init });
  }),
);
await store.close();
process.stdout.write(`done ${count}\n`);
