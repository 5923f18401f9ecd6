// A child process of the store contract (children.ts starts it by its path). argv[2] is a ChildRequest as
// JSON: it imports `store.module`, opens the store with its `open(store.arg)`, and then
// - `crash`: appends to 20 sessions as fast as it can, printing each acknowledged append as
//   `<key> <seq> <id>`, until the parent kills it with SIGKILL;
// - `reopen`: prints `{pid, found}` as one JSON line (`<seq> <id>` of every entry, by key) and exits;
// - `append`: prints `ready`, waits for a line on stdin, then runs `rounds` rounds (each appends once to
//   every key of `keys` at once), printing each acknowledged append as `<key> <seq> <id>`, then `done`.
import type { Store } from "../store.js";
import { type ChildRequest, retryBusy } from "./children.js";

const request = JSON.parse(process.argv[2] ?? "{}") as ChildRequest;
const opener = (await import(request.store.module)) as { open(arg: unknown): Promise<Store> };
if (typeof opener.open !== "function")
  throw new Error(`${request.store.module} does not export open(arg): the contract's child needs it`);
const store = await opener.open(request.store.arg);
const init = (createdBy: string) => ({ agent: "main", channel: "contract", createdBy });
const say = (line: string) => process.stdout.write(`${line}\n`);

async function appendOne(key: string, content: string, createdBy: string): Promise<void> {
  const { entries } = await retryBusy(() =>
    store.append(key, [{ type: "message", role: "user", content }], { init: init(createdBy) }),
  );
  const entry = entries[0]!;
  say(`${key} ${entry.seq} ${entry.id}`);
}

if (request.mode === "crash") {
  const payload = "x".repeat(200);
  const writer = async (n: number): Promise<never> => {
    for (let i = 0; ; i++) await appendOne(`crash:${n}`, `${i} ${payload}`, `u${n}`);
  };
  await Promise.all(Array.from({ length: 20 }, (_, n) => writer(n)));
} else if (request.mode === "reopen") {
  const found: Record<string, string[]> = {};
  for (const session of (await store.listSessions({ limit: 1000 })).sessions)
    found[session.key] = (await store.readEntries(session.id)).map((e) => `${e.seq} ${e.id}`);
  await store.close();
  say(JSON.stringify({ pid: process.pid, found }));
} else if (request.mode === "append") {
  say("ready");
  await new Promise<void>((resolve) => process.stdin.once("data", () => resolve()));
  for (let round = 0; round < request.rounds; round++)
    await Promise.all(request.keys.map((key) => appendOne(key, `${request.tag} ${round}`, request.tag)));
  await store.close();
  say("done");
}
