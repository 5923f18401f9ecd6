import { effectiveModelName, type ModelChoice } from "../config/effective-model.js";
import type { EngineConfig } from "../config/engine-config.js";
import { SessiondError } from "../model/errors.js";
import type { Runtime } from "../model/runtime.js";
import { a2aRuntime } from "./a2a.js";
import type { AgentRuntimeSettings } from "./agents.js";
import { claudeCodeRuntime } from "./claude-code.js";
import { codexRuntime } from "./codex.js";
import { echoRuntime } from "./echo.js";
import { runtimeFromConfig } from "./runner.js";
import { usesModelEndpoint } from "./sessions/open.js";

/**
 * The runtime an agent's settings name: Claude Code, Codex or an A2A agent as configured; a model agent's
 * model from `models` (a model given as a built TextModel is for compaction, not a runtime); else the echo.
 * A config that cannot work throws here, at start-up.
 */
export function runtimeForSettings(
  agent: string,
  settings: AgentRuntimeSettings,
  config: EngineConfig,
): Runtime {
  const cli = {
    ...(settings.cwd !== undefined ? { cwd: settings.cwd } : {}),
    ...(settings.model !== undefined ? { model: settings.model } : {}),
    ...(settings.instructions ? { instructions: settings.instructions } : {}),
    ...(settings.executable !== undefined ? { executable: settings.executable } : {}),
    ...(settings.permission !== undefined ? { permission: settings.permission } : {}),
  };
  switch (settings.runtime) {
    case "claude-code":
      return claudeCodeRuntime({
        ...cli,
        ...(settings.selfCompact !== undefined ? { selfCompact: settings.selfCompact } : {}),
        ...(settings.selfCompactWindow !== undefined
          ? { selfCompactWindow: settings.selfCompactWindow }
          : {}),
      });
    case "codex":
      return codexRuntime(cli);
    case "a2a":
      if (settings.url === undefined) {
        throw new SessiondError("CONFIG_INVALID", `agents.${agent}: runtime a2a needs a url`);
      }
      return a2aRuntime({
        url: settings.url,
        ...(settings.instructions ? { instructions: settings.instructions } : {}),
      });
    case "echo":
      return echoRuntime();
    default: {
      const model = settings.model === undefined ? undefined : config.models?.[settings.model];
      return model === undefined || "complete" in model ? echoRuntime() : runtimeFromConfig(model);
    }
  }
}

/** Each agent's runtime from the config file alone (built now, so a bad config fails at start-up). */
export function agentRuntimes(config: EngineConfig, agents: readonly string[]): Map<string, Runtime> {
  const runtimes = new Map<string, Runtime>();
  for (const agent of agents) {
    const { compaction: _c, durability: _d, queue: _q, ...settings } = config.agentOptions?.[agent] ?? {};
    runtimes.set(agent, runtimeForSettings(agent, settings, config));
  }
  return runtimes;
}

/**
 * Each agent's runtime as its current settings (agents.json over the config) say: rebuilt when they change,
 * so a new working directory or model applies from the next run.
 */
export function runtimeResolver(
  config: EngineConfig,
  settingsOf: (agent: string) => AgentRuntimeSettings | undefined,
): (agent: string, session?: ModelChoice) => Runtime {
  const built = new Map<string, { settings: string; runtime: Runtime }>();
  return (agent, session = {}) => {
    const own = settingsOf(agent) ?? {};
    // A session's model or provider override stands in for the agent's model (checked when set); Claude
    // Code and Codex take a model override as their own model name.
    const model = usesModelEndpoint(own.runtime)
      ? effectiveModelName(session, config.models ?? {}, own.model)
      : typeof session.model === "string"
        ? session.model
        : own.model;
    const settings = model === own.model || model === undefined ? own : { ...own, model };
    const json = JSON.stringify(settings);
    const slot = settings === own ? agent : `${agent}\u0000${model}`;
    const cached = built.get(slot);
    if (cached?.settings === json) return cached.runtime;
    const runtime = runtimeForSettings(agent, settings, config);
    built.set(slot, { settings: json, runtime });
    return runtime;
  };
}
