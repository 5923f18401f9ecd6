import type { Pool, PoolClient, PoolConfig } from "pg";
import { SessiondError } from "../../model/errors.js";
import { optionalPackage } from "../../model/optional-package.js";

const loadPg = optionalPackage("pg", async () => (await import("pg")).default);

const INT8 = 20;
const JSONB = 3802;

/**
 * A pool of connections to `url`. A connection runs one query at a time (pg queues the rest on the
 * client; sessiond never issues a second before the first returns). int8 columns (times in ms, counts)
 * come back as numbers (every value sessiond stores in them is below 2^53), jsonb as its text (the
 * SQLite store's row readers parse it).
 */
export async function openPool(url: string, max: number): Promise<Pool> {
  const pg = await loadPg();
  const config: PoolConfig = {
    connectionString: url,
    max,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 10_000,
    types: {
      getTypeParser: ((oid: number, format?: "text" | "binary") =>
        oid === INT8
          ? (value: string) => Number(value)
          : oid === JSONB
            ? (value: string) => value
            : pg.types.getTypeParser(oid, format)) as never,
    },
  };
  const pool = new pg.Pool(config);
  // An idle connection that breaks (the server restarted) is dropped by the pool; without a listener
  // the 'error' event would end the process.
  pool.on("error", () => {});
  return pool;
}

/** Runs `work` in one transaction on one connection; the connection goes back (or is dropped if broken). */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await connect(pool);
  let broken: unknown;
  try {
    await client.query("BEGIN");
    try {
      const result = await work(client);
      await client.query("COMMIT");
      return result;
    } catch (error) {
      if (isConnectionError(error)) broken = error;
      else await client.query("ROLLBACK").catch((e: unknown) => (broken = e));
      throw error;
    }
  } finally {
    release(client, broken);
  }
}

const ignore = () => {};

/**
 * A connection from the pool, or STORE_UNAVAILABLE when the server cannot be reached. While it is checked
 * out, a socket error between queries (the server went away) is the next query's failure, not an
 * unhandled 'error' event; `release` gives it back, or drops it when broken.
 */
export async function connect(pool: Pool): Promise<PoolClient> {
  let client: PoolClient;
  try {
    client = await pool.connect();
  } catch (error) {
    throw unavailable(error, "not-written");
  }
  client.on("error", ignore);
  return client;
}

export function release(client: PoolClient, broken?: unknown): void {
  client.removeListener("error", ignore);
  client.release(broken === undefined ? undefined : broken instanceof Error ? broken : true);
}

/** One query on any connection of the pool, with connection failures as STORE_UNAVAILABLE. */
export async function query<R extends object>(pool: Pool, sql: string, params: unknown[] = []): Promise<R[]> {
  try {
    return (await pool.query<R>(sql, params)).rows;
  } catch (error) {
    throw isConnectionError(error) ? unavailable(error, "not-written") : error;
  }
}

const CONNECTION_ERRNOS = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOENT",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
]);

/** The server went away or cannot be reached (as opposed to a statement failing). */
export function isConnectionError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") {
    // 08: connection exception; 57P01-57P03: admin/crash shutdown, cannot connect now.
    if (code.startsWith("08") || code === "57P01" || code === "57P02" || code === "57P03") return true;
    if (CONNECTION_ERRNOS.has(code)) return true;
  }
  return /Connection terminated|connection error|not queryable|timeout exceeded when trying to connect/i.test(
    error.message,
  );
}

/** `outcome`: whether the write may have been committed (`unknown`) or surely was not (`not-written`). */
export function unavailable(cause: unknown, outcome: "unknown" | "not-written"): SessiondError {
  const reason = cause instanceof Error ? cause.message : String(cause);
  return new SessiondError("STORE_UNAVAILABLE", `PostgreSQL is unavailable: ${reason}`, {
    cause,
    details: { outcome },
  });
}

/**
 * One statement committed without waiting for the WAL flush (`synchronous_commit = off`): for writes
 * whose loss in a server crash costs only time (a lease freed or renewed: it lapses instead).
 */
export async function queryUnflushed<R extends object>(
  pool: Pool,
  sql: string,
  params: unknown[],
): Promise<R[]> {
  return inTransaction(pool, async (client) => {
    await client.query("SET LOCAL synchronous_commit = off");
    return (await client.query<R>(sql, params)).rows;
  }).catch((error: unknown) => {
    throw isConnectionError(error) ? unavailable(error, "not-written") : error;
  });
}
