// Opens a JSONL directory and prints, as one JSON line, its PID and the sessions and entries it found.
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";

const store = new JsonlStore({ path: process.argv[2]!, onProblem: () => undefined });
const found: Record<string, string[]> = {};
for (const session of (await store.listSessions({ limit: 1000 })).sessions)
  found[session.key] = (await store.readEntries(session.id)).map((e) => `${e.seq} ${e.id}`);
await store.close();
process.stdout.write(`${JSON.stringify({ pid: process.pid, found })}\n`);
