import type { ChannelsConfig } from "../channels/config.js";
import type { EngineConfig } from "../config/engine-config.js";
import { isSessiondError, SessiondError } from "../model/errors.js";

/** One thing `serve` would fail on, with where in the config it comes from. */
export interface Problem {
  path: string;
  message: string;
}

/** Every model key variable that is named but not set. */
export function modelKeyProblems(config: EngineConfig, env: NodeJS.ProcessEnv): Problem[] {
  const problems: Problem[] = [];
  for (const [name, model] of Object.entries(config.models ?? {})) {
    if ("complete" in model || model.apiKeyEnv === undefined) continue;
    if (!env[model.apiKeyEnv]) {
      problems.push({
        path: `models.${name}.api_key_env`,
        message: `the environment variable ${model.apiKeyEnv} is not set`,
      });
    }
  }
  return problems;
}

/**
 * Every secret each enabled channel reads and cannot get. The adapter is built with an environment that
 * records the variables it asks for and does not find (answering with a stand-in that is never sent), so
 * a channel missing two variables names both, and a variable it does not read (Telegram's webhook secret
 * when it polls) is not asked for.
 */
export async function channelProblems(
  channels: ChannelsConfig | undefined,
  env: NodeJS.ProcessEnv,
): Promise<Problem[]> {
  const enabled = Object.entries(channels ?? {}).filter(
    ([, s]) => s && (s as { enabled?: boolean }).enabled !== false,
  );
  if (enabled.length === 0) return [];
  const { createChannels } = await import("../channels/index.js");
  const problems: Problem[] = [];
  for (const [name, settings] of enabled) {
    const missing: string[] = [];
    const recording = new Proxy(env, {
      get(target, variable) {
        if (typeof variable !== "string") return undefined;
        const value = target[variable];
        if (value?.trim()) return value;
        missing.push(variable);
        // Shaped like the most particular secret (a Telegram bot token, `<id>:<secret>`) so no check trips on it.
        return "0:sessiond-preflight-stand-in";
      },
    });
    try {
      createChannels({ [name]: settings } as ChannelsConfig, { env: recording });
    } catch (error) {
      if (!isSessiondError(error, "CONFIG_INVALID") && !isSessiondError(error, "INVALID_ARGUMENT"))
        throw error;
      problems.push({ path: `channels.${name}`, message: error.message.replace(/^channels\./, "") });
    }
    for (const variable of new Set(missing)) {
      problems.push({ path: `channels.${name}`, message: `the environment variable ${variable} is not set` });
    }
  }
  return problems;
}

/** CONFIG_INVALID naming every missing key and secret at once, before anything is opened. */
export async function requireSecrets(
  config: EngineConfig,
  env: NodeJS.ProcessEnv,
  file?: string,
): Promise<void> {
  const problems = [...modelKeyProblems(config, env), ...(await channelProblems(config.channels, env))];
  if (problems.length === 0) return;
  const lines = problems.map((p) => `  ${p.path}: ${p.message}`).join("\n");
  throw new SessiondError(
    "CONFIG_INVALID",
    `${file ?? "config"}: ${problems.length === 1 ? "a secret is" : `${problems.length} secrets are`} missing:\n${lines}`,
    { details: { problems } },
  );
}
