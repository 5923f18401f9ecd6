import type { EngineConfig } from "../config/engine-config.js";
import type { Runtime } from "../model/runtime.js";
import { echoRuntime, runtimeFromConfig } from "../runtimes/index.js";

/**
 * Each agent's runtime: the model its `agentOptions` names (built now, so a bad config fails at
 * start-up), else the offline echo. A model given as a built TextModel is for compaction, not a runtime.
 */
export function agentRuntimes(config: EngineConfig, agents: readonly string[]): Map<string, Runtime> {
  const runtimes = new Map<string, Runtime>();
  for (const agent of agents) {
    const name = config.agentOptions?.[agent]?.model;
    const model = name === undefined ? undefined : config.models?.[name];
    runtimes.set(
      agent,
      model === undefined || "complete" in model ? echoRuntime() : runtimeFromConfig(model),
    );
  }
  return runtimes;
}
