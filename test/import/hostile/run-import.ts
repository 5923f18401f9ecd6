// Runs one import in its own process, so that a read that hangs or fills memory cannot take the test
// runner with it: `node --import tsx run-import.ts <source> <path> <store.db> [limits JSON]`. Prints the
// report and the process's peak memory as one JSON line.
import { importSessions } from "../../../src/import/importer.js";
import { readSource } from "../../../src/import/read-source.js";
import type { ImportSource } from "../../../src/import/types.js";
import { SqliteStore } from "../../../src/store/sqlite/sqlite-store.js";

const [source, path, db, limits] = process.argv.slice(2) as [ImportSource, string, string, string?];
const store = new SqliteStore({ path: db });
const read = readSource(source, path, limits ? { limits: JSON.parse(limits) } : {});
const report = await importSessions(store, source, read);
await store.close();
process.stdout.write(`${JSON.stringify({ report, maxRssBytes: process.resourceUsage().maxRSS * 1024 })}\n`);
