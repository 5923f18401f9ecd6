import type { EngineConfig } from "../config/engine-config.js";
import type { Engine } from "../engine.js";
import { isSessiondError } from "../model/errors.js";

/** Why the gateway runs on the memory store instead of the configured one (GoClaw's fallback). */
export interface StoreFallback {
  /** The backend that could not be opened. */
  configured: string;
  /** Its error code: STORE_UNAVAILABLE, STORE_CORRUPT or STORE_FAILED. */
  code: string;
  /** Its error message. */
  reason: string;
}

const OPEN_FAILURES: readonly string[] = ["STORE_UNAVAILABLE", "STORE_CORRUPT", "STORE_FAILED"];

/** Stores in this process's own files: the only ones a memory fallback may stand in for. */
const EMBEDDED: readonly string[] = ["sqlite", "jsonl"];

export interface SharedStoreRetry {
  /** Called before each wait with the one line to print. */
  onRetry(line: string): void;
  /** Default: a real pause. Tests may shorten it. */
  wait?: (ms: number) => Promise<void>;
  /** First wait; it doubles up to 30 s. Default 1 s. */
  backoffMs?: number;
}

/**
 * Opens the engine on the configured store. When an embedded store (SQLite, JSONL) cannot be opened and
 * `fallback` allows it, on the memory store instead (runtime sessions and agent settings in memory too),
 * saying why. A shared store (PostgreSQL) that cannot be reached is never replaced: beside healthy gateways a
 * memory-backed one would take messages and lose them. It is tried again with a doubling backoff until it
 * answers; the caller has not started listening meanwhile, so no traffic reaches this gateway. Any other
 * error, and every error with `fallback: false`, is thrown as it is.
 */
export async function createEngineOrFallback(
  config: EngineConfig,
  create: (config: EngineConfig) => Promise<Engine>,
  fallback: boolean,
  retry?: SharedStoreRetry,
): Promise<{ engine: Engine; fallback?: StoreFallback }> {
  const store = config.store;
  const configured = store && "backend" in store ? store.backend : "sqlite";
  let backoff = retry?.backoffMs ?? 1000;
  for (;;) {
    try {
      return { engine: await create(config) };
    } catch (error) {
      if (!fallback || !isSessiondError(error) || !OPEN_FAILURES.includes(error.code)) throw error;
      // A sealed store without its key is a configuration to fix: on the memory store it would look empty.
      if (error.details?.sealed === true) throw error;
      if (!EMBEDDED.includes(configured)) {
        if (!retry) throw error;
        retry.onRetry(
          `the ${configured} store cannot be reached (${error.code}: ${error.message}); not listening until it can, retrying in ${backoff / 1000} s`,
        );
        await (retry.wait ?? ((ms) => new Promise((r) => setTimeout(r, ms))))(backoff);
        backoff = Math.min(backoff * 2, 30_000);
        continue;
      }
      const engine = await create({ ...config, store: { backend: "memory" } });
      return { engine, fallback: { configured, code: error.code, reason: error.message } };
    }
  }
}

/** The one-line warning printed at start and logged: loud, since nothing is kept after exit. */
export function fallbackWarning(fallback: StoreFallback): string {
  return (
    `the ${fallback.configured} store could not be opened (${fallback.code}: ${fallback.reason}); ` +
    "running on the in-memory store: every session is lost when the gateway stops " +
    "(store.fallback: false exits instead)"
  );
}
