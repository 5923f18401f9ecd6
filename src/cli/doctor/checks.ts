import { existsSync, statfsSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import type { ChannelsConfig } from "../../channels/config.js";
import type { EngineConfig } from "../../config/engine-config.js";
import { TOKEN_FILE } from "../../gateway/token.js";
import { isSessiondError } from "../../model/errors.js";
import { withLazyModels } from "../lazy-models.js";
import { channelProblems, modelKeyProblems } from "../preflight.js";

/** One line of the doctor's report. */
export interface Finding {
  ok: boolean;
  what: string;
  detail: string;
}

const ok = (what: string, detail: string): Finding => ({ ok: true, what, detail });
const fail = (what: string, detail: string): Finding => ({ ok: false, what, detail });

/** Less free space than this under the data directory is a problem: SQLite needs room for its journal. */
export const MIN_FREE_BYTES = 256 * 1024 * 1024;
const REACH_TIMEOUT_MS = 5000;

/** Every missing model key and channel secret, one finding each. */
export async function secretFindings(config: EngineConfig, env: NodeJS.ProcessEnv): Promise<Finding[]> {
  const problems = [...modelKeyProblems(config, env), ...(await channelProblems(config.channels, env))];
  return problems.map((p) => fail(p.path, p.message));
}

/** The store opens (migrating if it must), with its backend and where it is; the space left beside it. */
export async function storeFindings(config: EngineConfig & { dataDir: string }): Promise<Finding[]> {
  const findings: Finding[] = [];
  const store = config.store && !("append" in config.store) ? config.store : undefined;
  const backend = store?.backend ?? "sqlite";
  const where =
    store?.backend === "sqlite" || store?.backend === "jsonl"
      ? store.path
      : backend === "postgres"
        ? "the PostgreSQL database"
        : join(config.dataDir, "sessiond.db");
  if ((backend === "sqlite" || backend === "jsonl") && !existsSync(where)) {
    findings.push(ok("store", `${backend} at ${where}: not created yet (the first write creates it)`));
  } else {
    const { createEngine } = await import("../../engine.js");
    try {
      const engine = await createEngine({ ...withLazyModels(config), channels: {} });
      await engine.close();
      findings.push(ok("store", `${backend} at ${where}: opens, schema current`));
    } catch (error) {
      const code = isSessiondError(error) ? `[${error.code}] ` : "";
      findings.push(fail("store", `${backend} at ${where}: ${code}${(error as Error).message}`));
    }
  }
  if (backend !== "postgres" && backend !== "memory") {
    const free = freeBytes(config.dataDir);
    if (free !== undefined) {
      const text = `${(free / 1024 ** 3).toFixed(1)} GiB free under ${config.dataDir}`;
      findings.push(free < MIN_FREE_BYTES ? fail("disk", `${text} (less than 256 MiB)`) : ok("disk", text));
    }
  }
  return findings;
}

function freeBytes(dir: string): number | undefined {
  let at = dir;
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  try {
    const stats = statfsSync(at);
    return stats.bavail * stats.bsize;
  } catch {
    return undefined;
  }
}

/** The token file is the gateway's password: only its owner may read it. */
export function tokenFindings(dataDir: string, env: NodeJS.ProcessEnv): Finding[] {
  if (env.SESSIOND_TOKEN?.trim()) return [ok("token", "from $SESSIOND_TOKEN")];
  const path = join(dataDir, TOKEN_FILE);
  const stats = statSync(path, { throwIfNoEntry: false });
  if (!stats) return [ok("token", `${path}: not created yet (sessiond serve writes it, mode 0600)`)];
  const mode = stats.mode & 0o777;
  const octal = mode.toString(8).padStart(4, "0");
  return mode & 0o077
    ? [fail("token", `${path} is readable by others (mode ${octal}): chmod 600 ${path}`)]
    : [ok("token", `${path} (mode ${octal})`)];
}

const CHANNEL_BASES: Readonly<Record<string, string>> = {
  telegram: "https://api.telegram.org",
  slack: "https://slack.com/api",
  discord: "https://discord.com/api",
  whatsapp: "https://graph.facebook.com",
  msteams: "https://login.microsoftonline.com",
};

/** Where each enabled channel and each model endpoint is called: any HTTP answer means reachable. */
export function endpoints(config: EngineConfig): Array<{ what: string; url: string }> {
  const list: Array<{ what: string; url: string }> = [];
  for (const [name, model] of Object.entries(config.models ?? {})) {
    if ("complete" in model) continue;
    const base =
      model.baseUrl ??
      (model.provider === "openai" ? "https://api.openai.com/v1" : "https://api.anthropic.com/v1");
    list.push({ what: `models.${name}`, url: `${base.replace(/\/$/, "")}/models` });
  }
  for (const [name, raw] of Object.entries((config.channels ?? {}) as ChannelsConfig)) {
    const settings = raw as { enabled?: boolean; api_base_url?: string; homeserver_url?: string } | undefined;
    if (!settings || settings.enabled === false) continue;
    const url = settings.api_base_url ?? settings.homeserver_url ?? CHANNEL_BASES[name];
    if (url) list.push({ what: `channels.${name}`, url });
  }
  return list;
}

export async function reachFindings(config: EngineConfig): Promise<Finding[]> {
  return Promise.all(
    endpoints(config).map(async ({ what, url }) => {
      try {
        const response = await fetch(url, { method: "GET", signal: AbortSignal.timeout(REACH_TIMEOUT_MS) });
        await response.body?.cancel();
        return ok(what, `${url} reachable (HTTP ${response.status})`);
      } catch (error) {
        const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
        return fail(what, `${url} not reachable (${cause})`);
      }
    }),
  );
}
