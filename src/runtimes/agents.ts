import type { z } from "zod";
import { SessiondError } from "../model/errors.js";
import { lazySchema } from "../model/zod.js";
import type { SettingsDocument } from "./settings-document.js";

export const RUNTIME_KINDS = ["model", "echo", "claude-code", "codex", "a2a"] as const;
export type RuntimeKind = (typeof RUNTIME_KINDS)[number];

/** What sets an agent's runtime up. For `model` agents `model` names an endpoint of `models`. */
export interface AgentRuntimeSettings {
  runtime?: RuntimeKind;
  /** The agent's own working directory (Claude Code, Codex): changing it clears its runtime sessions. */
  cwd?: string;
  /** For Claude Code and Codex, the runtime's model name; for `model` agents, a name from `models`. */
  model?: string;
  instructions?: string;
  /** Claude Code's or Codex's executable; default the SDK's own. */
  executable?: string;
  /** A2A: the remote agent's base URL. */
  url?: string;
  /** LoCrew's permission modes: `ask-first` asks before writing (a work session lifts that for a while); `auto` writes. */
  permission?: PermissionMode;
  /** Claude Code: "Let it compact its own history" (`on`: its auto-compaction, `off`: none; default the CLI's). */
  selfCompact?: "on" | "off";
  /** Claude Code: the token count at which it compacts its own history (at least 100,000). */
  selfCompactWindow?: number;
}

export const PERMISSION_MODES = ["ask-first", "auto"] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];

export const agentSettingsSchema = lazySchema((z) =>
  z.strictObject({
    runtime: z.enum(RUNTIME_KINDS).optional(),
    cwd: z.string().min(1).optional(),
    model: z.string().min(1).optional(),
    instructions: z.string().optional(),
    executable: z.string().min(1).optional(),
    url: z.string().url().optional(),
    permission: z.enum(PERMISSION_MODES).optional(),
    selfCompact: z.enum(["on", "off"]).optional(),
    selfCompactWindow: z.coerce.number().int().min(100_000).optional(),
  }),
);

export const agentsLayerSchema = lazySchema((z) =>
  z.strictObject({
    agents: z.record(z.string(), agentSettingsSchema()).default({}),
    deleted: z.array(z.string()).default([]),
  }),
);
export type AgentsLayer = z.infer<ReturnType<typeof agentsLayerSchema>>;

export const emptyAgentsLayer = (): AgentsLayer => ({ agents: {}, deleted: [] });

export const AGENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Runtimes that keep their own session per conversation, and so a working directory. */
export function keepsRuntimeSessions(runtime: RuntimeKind | undefined): boolean {
  return runtime === "claude-code" || runtime === "codex" || runtime === "a2a";
}

/**
 * Agent settings the CLI and API can edit, layered over the config file's agents (a value there wins; an
 * agent listed under `deleted` is gone even if the config names it). The layer is a settings document:
 * `agents.json` in the data directory, a row of the PostgreSQL database every gateway shares, or memory.
 */
export class AgentSettings {
  constructor(
    private readonly layer: SettingsDocument<AgentsLayer>,
    private readonly base: Record<string, AgentRuntimeSettings>,
  ) {}

  /** Every agent, config first, then the ones added here, in order. */
  names(): string[] {
    return this.namesOf(this.layer.current());
  }

  get(name: string): AgentRuntimeSettings | undefined {
    if (!this.names().includes(name)) return undefined;
    return { ...this.base[name], ...this.layer.current().agents[name] };
  }

  /** Resolves once a change made through another process is read. */
  settled(): Promise<void> | undefined {
    return this.layer.settled();
  }

  /** Applies a patch (`null` removes a value set here); returns the settings before and after. */
  async update(
    name: string,
    patch: Partial<Record<keyof AgentRuntimeSettings, string | null>>,
  ): Promise<{ before: AgentRuntimeSettings; after: AgentRuntimeSettings }> {
    const before = this.require(name);
    await this.layer.change((layer) => {
      const own: Record<string, unknown> = { ...layer.agents[name] };
      for (const [field, value] of Object.entries(patch)) {
        if (value === null) delete own[field];
        else if (value !== undefined) own[field] = value;
      }
      const parsed = agentSettingsSchema().safeParse(own);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new SessiondError(
          "INVALID_ARGUMENT",
          `agent ${name}: ${issue?.path.join(".") || "settings"}: ${issue?.message ?? "invalid"}`,
        );
      }
      return { ...layer, agents: { ...layer.agents, [name]: parsed.data } };
    });
    return { before, after: this.require(name) };
  }

  /** A new agent with the same settings as `from` (runtime sessions are not settings: none are copied). */
  async duplicate(from: string, to: string): Promise<AgentRuntimeSettings> {
    const settings = this.require(from);
    if (!AGENT_NAME.test(to)) {
      throw new SessiondError(
        "INVALID_ARGUMENT",
        `agent name ${JSON.stringify(to)}: letters, digits, . _ - (1–64)`,
      );
    }
    await this.layer.change((layer) => {
      if (this.namesOf(layer).includes(to)) {
        throw new SessiondError("INVALID_ARGUMENT", `agent ${to} already exists`);
      }
      return {
        agents: { ...layer.agents, [to]: { ...settings } },
        deleted: layer.deleted.filter((n) => n !== to),
      };
    });
    return this.require(to);
  }

  async delete(name: string): Promise<void> {
    this.require(name);
    await this.layer.change((layer) => {
      const { [name]: _gone, ...agents } = layer.agents;
      return { agents, deleted: name in this.base ? [...layer.deleted, name] : layer.deleted };
    });
  }

  private namesOf(layer: AgentsLayer): string[] {
    return [...new Set([...Object.keys(this.base), ...Object.keys(layer.agents)])].filter(
      (n) => !layer.deleted.includes(n),
    );
  }

  private require(name: string): AgentRuntimeSettings {
    const settings = this.get(name);
    if (!settings) throw new SessiondError("AGENT_NOT_FOUND", `no agent named ${JSON.stringify(name)}`);
    return settings;
  }
}
