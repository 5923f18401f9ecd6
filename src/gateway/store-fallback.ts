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

/**
 * Opens the engine on the configured store; when that store cannot be opened and `fallback` allows it,
 * on the memory store instead (runtime sessions and agent settings in memory too), saying why. Any other
 * error, and every error with `fallback: false`, is thrown as it is.
 */
export async function createEngineOrFallback(
  config: EngineConfig,
  create: (config: EngineConfig) => Promise<Engine>,
  fallback: boolean,
): Promise<{ engine: Engine; fallback?: StoreFallback }> {
  try {
    return { engine: await create(config) };
  } catch (error) {
    if (!fallback || !isSessiondError(error) || !OPEN_FAILURES.includes(error.code)) throw error;
    const store = config.store;
    const configured = store && "backend" in store ? store.backend : "sqlite";
    const engine = await create({ ...config, store: { backend: "memory" } });
    return { engine, fallback: { configured, code: error.code, reason: error.message } };
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
