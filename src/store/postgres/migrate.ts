import type { Pool } from "pg";
import { SessiondError } from "../../model/errors.js";
import { inTransaction } from "./pool.js";
import { MIGRATIONS, SCHEMA_VERSION } from "./schema.js";

/** Any constant: the advisory lock that makes processes starting together migrate one at a time. */
const MIGRATION_LOCK = 7_420_015;

/**
 * Applies the migrations this database lacks, each once, in one transaction under a transaction-scoped
 * advisory lock: a second process starting at the same moment waits, then finds them applied. A database
 * migrated by a newer sessiond is refused (STORE_SCHEMA_NEWER) and left untouched.
 */
export async function migrate(pool: Pool): Promise<void> {
  await inTransaction(pool, async (client) => {
    await client.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    await client.query(
      "CREATE TABLE IF NOT EXISTS sessiond_schema (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())",
    );
    const { rows } = await client.query<{ version: number | null }>(
      "SELECT max(version) AS version FROM sessiond_schema",
    );
    const applied = rows[0]?.version ?? 0;
    if (applied > SCHEMA_VERSION) throw schemaNewer(applied);
    for (let version = applied + 1; version <= SCHEMA_VERSION; version++) {
      await client.query(MIGRATIONS[version - 1]!);
      await client.query("INSERT INTO sessiond_schema (version) VALUES ($1)", [version]);
    }
  });
}

function schemaNewer(applied: number): SessiondError {
  return new SessiondError(
    "STORE_SCHEMA_NEWER",
    `the database's schema is version ${applied}, newer than this sessiond knows (${SCHEMA_VERSION}): upgrade sessiond, or point it at another database`,
    { details: { schema: applied, known: SCHEMA_VERSION } },
  );
}
