import { defaultRoutingConfig, type RoutingConfig } from "../keys/index.js";
import type { EngineConfig } from "./engine-config.js";

/** The routing an engine with this config uses; throws INVALID_ARGUMENT for bad values. */
export function routingConfigOf(config: EngineConfig): RoutingConfig {
  return defaultRoutingConfig({
    ...config.routing,
    ...(config.agents ? { agents: config.agents } : {}),
    ...(config.defaultAgent ? { defaultAgent: config.defaultAgent } : {}),
  });
}
