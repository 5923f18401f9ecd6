import { join } from "node:path";
import type { Store } from "../store/store.js";
import type { CostLedger } from "./entry.js";
import { MemoryCostLedger } from "./memory.js";
import { PgCostLedger } from "./postgres.js";
import { SqliteCostLedger } from "./sqlite.js";

export const COST_LEDGER_FILE = "cost-ledger.db";

/**
 * The cost ledger beside the runtime sessions: a PostgreSQL store's database (its pool, shared by every
 * gateway on it), else `cost-ledger.db` in `dir` (the data directory), else memory (a memory store).
 */
export async function openCostLedger(dir: string | undefined, store: Store): Promise<CostLedger> {
  if (store.backend === "postgres") {
    const { PostgresStore } = await import("../store/postgres/postgres-store.js");
    if (store instanceof PostgresStore) {
      const { query } = await import("../store/postgres/pool.js");
      return PgCostLedger.open(store.pool, query);
    }
  }
  return dir === undefined ? new MemoryCostLedger() : new SqliteCostLedger(join(dir, COST_LEDGER_FILE));
}
