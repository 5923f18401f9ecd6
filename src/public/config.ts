/** `sessiond/config`: `sessiond.yaml` → the engine's config. */
export { type LoadedConfig, type LoadOptions, loadConfig } from "../config/load.js";
