import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type { EngineConfig } from "../config/engine-config.js";
import { type LoadedConfig, loadConfig } from "../config/load.js";
import { routingConfigOf } from "../config/routing.js";
import type { Engine } from "../engine.js";
import type { RoutingConfig } from "../keys/index.js";
import { isSessiondError, SessiondError } from "../model/errors.js";
import type { CliIo } from "./io.js";
import { withLazyModels } from "./lazy-models.js";

/** The options every command accepts (declared on the root command). */
export interface GlobalOptions {
  config?: string;
  dataDir?: string;
}

/** Loads sessiond.yaml and SESSIOND_* variables; `--data-dir` wins over both. Prints the config's warnings. */
export function loadCliConfig(globals: GlobalOptions, io: CliIo): LoadedConfig {
  const env =
    globals.dataDir === undefined
      ? io.env
      : { ...io.env, SESSIOND_DATA_DIR: resolve(io.cwd, globals.dataDir) };
  const loaded = loadConfig({ cwd: io.cwd, env, ...(globals.config ? { file: globals.config } : {}) });
  for (const warning of loaded.warnings) io.stderr(`warning: ${warning}\n`);
  return loaded;
}

/**
 * The routing config as the engine would build it. A bad value here comes from the config file, not the
 * command line, so it is reported as CONFIG_INVALID (exit 1) rather than INVALID_ARGUMENT (exit 2).
 */
export function routingFromConfig(loaded: LoadedConfig): RoutingConfig {
  try {
    return routingConfigOf(loaded.config);
  } catch (error) {
    if (!isSessiondError(error, "INVALID_ARGUMENT")) throw error;
    throw new SessiondError("CONFIG_INVALID", `${loaded.file ?? "config"}: ${error.message}`, {
      cause: error,
    });
  }
}

export interface EngineUse {
  /** Commands that only read never create a database: a missing file reads as an empty store. */
  readOnly: boolean;
  /** Skip the start-up warnings (for commands that report the same thing themselves). */
  quiet?: boolean;
}

/** Opens the engine, runs `fn`, and always closes the engine so the store is flushed before exit. */
export async function withEngine<T>(
  globals: GlobalOptions,
  io: CliIo,
  use: EngineUse,
  fn: (engine: Engine) => Promise<T>,
): Promise<T> {
  const loaded = loadCliConfig(globals, io);
  routingFromConfig(loaded);
  // Loaded here, not at start-up: `route` and `--help` never need it.
  const { createEngine } = await import("../engine.js");
  const engine = await createEngine(engineConfigFor(loaded.config, use));
  let result: T;
  try {
    if (!use.quiet) for (const warning of await engine.startupWarnings()) io.stderr(`warning: ${warning}\n`);
    result = await fn(engine);
  } catch (error) {
    await engine.close().catch(() => {});
    throw error;
  }
  await engine.close();
  return result;
}

/** No command here runs a turn, so a model is only built when one is called (compaction, titles). */
function engineConfigFor(loaded: EngineConfig, use: EngineUse): EngineConfig {
  const config = withLazyModels(loaded);
  const store = config.store;
  if (
    use.readOnly &&
    store &&
    !("append" in store) &&
    (store.backend === "sqlite" || store.backend === "jsonl") &&
    !existsSync(store.path)
  ) {
    return { ...config, store: { backend: "memory" } };
  }
  return config;
}
