// Opens the store of argv[2] and prints, as one JSON line, its PID and every session's entries it found
// (`<seq> <id>` per entry, by key).
import { openStore, type StoreConfig } from "../../src/store/open.js";

const store = await openStore(JSON.parse(process.argv[2] ?? "{}") as StoreConfig);
const found: Record<string, string[]> = {};
for (const session of (await store.listSessions({ limit: 1000 })).sessions)
  found[session.key] = (await store.readEntries(session.id)).map((e) => `${e.seq} ${e.id}`);
await store.close();
process.stdout.write(`${JSON.stringify({ pid: process.pid, found })}\n`);
