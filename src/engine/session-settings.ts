import { DEFAULT_COMPACTION, resolveCompactionPolicy } from "../compaction/policy.js";
import { effectiveModelName } from "../config/effective-model.js";
import type { EngineConfig } from "../config/engine-config.js";
import {
  compactionOverrides,
  type InheritedLayers,
  planOverrideChange,
  queueOverrides,
  resolveSetting,
} from "../lifecycle/overrides.js";
import { SessiondError } from "../model/errors.js";
import { DEFAULT_QUEUE, type QueueSettings } from "../model/queue.js";
import type { OverrideValue, Session } from "../model/session.js";
import type { TextModel } from "../model/text-model.js";
import type { AgentRuntimeSettings } from "../runtimes/agents.js";
import { usesModelEndpoint } from "../runtimes/sessions/open.js";
import type { AgentTurnSettings } from "../turns/turn-deps.js";
import type { OverrideChange } from "./api.js";

/**
 * What a session of an agent runs with, each setting from the most specific layer that has it: the
 * session's overrides, then the agent's settings (agents.json over sessiond.yaml), then the defaults.
 */
export class SessionSettings {
  constructor(
    private readonly config: EngineConfig,
    private readonly models: ReadonlyMap<string, TextModel>,
    /** The agent's settings edited through `sessiond agents` (agents.json, or the shared database). */
    private readonly edited: (agent: string) => AgentRuntimeSettings | undefined,
  ) {}

  /** What a session of this agent has when it overrides nothing: the agent's settings, then the defaults. */
  inherited(agent: string): InheritedLayers {
    const { config } = this;
    const options = config.agentOptions?.[agent];
    const { model: _m, summarizer: _s, ...compaction } = config.compaction ?? {};
    return {
      agent: {
        ...compactionOverrides(options?.compaction),
        ...queueOverrides(options?.queue),
        ...(options?.model ? { model: options.model } : {}),
      },
      defaults: {
        ...compactionOverrides({ ...DEFAULT_COMPACTION, ...compaction }),
        ...queueOverrides({
          ...DEFAULT_QUEUE,
          cap: config.maxQueuedTurns ?? DEFAULT_QUEUE.cap,
          ...config.queue,
        }),
      },
    };
  }

  /** A key's queue settings: the session's overrides (when it has a session), its agent's, the defaults. */
  queue(agent: string, session: Session | undefined): QueueSettings {
    const layers = { ...(session ? { session: session.overrides } : {}), ...this.inherited(agent) };
    const value = <N extends "queue.mode" | "queue.debounce_ms" | "queue.cap" | "queue.drop">(name: N) =>
      resolveSetting(name, layers).value;
    return {
      mode: value("queue.mode") ?? DEFAULT_QUEUE.mode,
      debounceMs: value("queue.debounce_ms") ?? DEFAULT_QUEUE.debounceMs,
      cap: value("queue.cap") ?? DEFAULT_QUEUE.cap,
      drop: value("queue.drop") ?? DEFAULT_QUEUE.drop,
    };
  }

  /** The agent's compaction policy (default < agent < session overrides) and model facts for a turn. */
  turn(agent: string, session: Session): AgentTurnSettings {
    const { config, models } = this;
    const agentOptions = config.agentOptions?.[agent];
    const { model: _m, summarizer: _s, ...base } = config.compaction ?? {};
    const policy = resolveCompactionPolicy(
      { ...DEFAULT_COMPACTION, ...base },
      agentOptions?.compaction,
      session.overrides,
    );
    // Settings edited through `sessiond agents` (agents.json) win over the config file's.
    const layered = this.edited(agent);
    const instructions = layered?.instructions ?? agentOptions?.instructions;
    const modelAgent = usesModelEndpoint(layered?.runtime ?? agentOptions?.runtime);
    // The session's own model (or provider) when it has one: its window drives the window trigger.
    const model = modelAgent ? effectiveModelName(session.overrides, models, agentOptions?.model) : undefined;
    const contextWindow = model ? models.get(model)?.contextWindow : undefined;
    return {
      policy,
      // A stateless model run sees the LoCrew window (§4); runtimes that keep a session get their own prompt.
      ...(modelAgent && agentOptions?.model
        ? { window: { self: agent, ...(contextWindow ? { contextWindow } : {}) } }
        : {}),
      ...(contextWindow ? { contextWindow } : {}),
      ...(instructions ? { instructions } : {}),
      ...(agentOptions?.turnTimeoutMs ? { turnTimeoutMs: agentOptions.turnTimeoutMs } : {}),
    };
  }

  /**
   * The session's overrides after `changes` (null removes one), and what each change did; refused
   * (nothing planned) when a value is not one the config has or the result breaks a cross-field rule.
   */
  plan(
    session: Session,
    changes: ReadonlyArray<readonly [string, OverrideValue | null]>,
  ): { patch: Record<string, OverrideValue | null>; changes: OverrideChange[] } {
    const inherited = this.inherited(session.agent);
    const overrides = { ...session.overrides };
    const patch: Record<string, OverrideValue | null> = {};
    const result: OverrideChange[] = [];
    for (const [name, value] of changes) {
      if (value !== null) this.checkConfigured(session.agent, name, value);
      const plan = planOverrideChange({ overrides }, name, value, inherited);
      for (const [field, v] of Object.entries(plan.patch.overrides)) {
        patch[field] = v;
        if (v === null) delete overrides[field];
        else overrides[field] = v;
      }
      result.push({ name, effect: plan.effect, effective: plan.effective });
    }
    // Cross-field rules (keep_recent below max_messages) are checked on the result before it is stored.
    this.turn(session.agent, { ...session, overrides });
    return { patch, changes: result };
  }

  /**
   * A session's `model` or `provider` must be one the config has (for agents that call a model endpoint;
   * Claude Code and Codex take their own model names): refused when set, with the list of what is.
   */
  private checkConfigured(agent: string, name: string, value: OverrideValue): void {
    if (name !== "model" && name !== "provider") return;
    const runtime = this.edited(agent)?.runtime ?? this.config.agentOptions?.[agent]?.runtime;
    if (!usesModelEndpoint(runtime)) return;
    const { models } = this;
    const known =
      name === "model" ? [...models.keys()] : [...new Set([...models.values()].map((m) => m.provider))];
    if (known.includes(String(value))) return;
    throw new SessiondError(
      "INVALID_ARGUMENT",
      `${name} ${JSON.stringify(value)} is not configured; configured ${name === "model" ? "models" : "providers"}: ${known.join(", ") || "none"}`,
      { details: { name, known } },
    );
  }
}
