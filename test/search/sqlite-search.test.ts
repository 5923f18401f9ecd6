import { join } from "node:path";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { runSearchContract } from "./search-contract.js";

runSearchContract("sqlite", async (dir) => new SqliteStore({ path: join(dir, "sessiond.db") }));
runSearchContract(
  "sqlite, every write through the journal",
  async (dir) => new SqliteStore({ path: join(dir, "sessiond.db"), journalMinBatch: 1, foldThreshold: 3 }),
);
