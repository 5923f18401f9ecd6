import type { CompactionPolicy } from "../compaction/policy.js";
import { SessiondError } from "../model/errors.js";
import {
  DROP_POLICIES,
  type DropPolicy,
  QUEUE_MODES,
  type QueueMode,
  type QueueSettings,
} from "../model/queue.js";
import type { OverrideValue, Session } from "../model/session.js";
import type { SessionPatch } from "../store/store.js";

export const RESET_MODES = ["off", "daily", "idle"] as const;
export type ResetMode = (typeof RESET_MODES)[number];

/** Every setting a session can override, with the type its value has once parsed and checked. */
export interface OverrideTypes {
  provider: string;
  model: string;
  "compaction.enabled": boolean;
  "compaction.max_messages": number;
  "compaction.keep_recent": number;
  "compaction.max_tokens": number;
  "compaction.window_fraction": number;
  "compaction.source_max_chars": number;
  "compaction.tool_result_max_chars": number;
  "compaction.summary_max_chars": number;
  "reset.mode": ResetMode;
  "reset.at_hour": number;
  "reset.idle_minutes": number;
  /** An IANA time zone, stored in its canonical spelling (`europe/paris` → `Europe/Paris`). */
  "reset.timezone": string;
  "queue.mode": QueueMode;
  "queue.debounce_ms": number;
  "queue.cap": number;
  "queue.drop": DropPolicy;
}

export type OverrideName = keyof OverrideTypes;

/** One layer of settings, keyed by override name (`compaction.max_messages`, …), as stored on a session. */
export type Overrides = Readonly<Record<string, OverrideValue>>;

/**
 * Where a setting comes from, most specific first. `session` is the reading of ZeroClaw's "user": the
 * override set on this one session, by its user (a chat command) or an operator (`sessiond sessions set`).
 * Then the agent's configuration, then the per-sender configuration, then the global default.
 */
export type OverrideSource = "session" | "agent" | "sender" | "default";

export interface OverrideLayers {
  session?: Overrides;
  agent?: Overrides;
  sender?: Overrides;
  defaults: Overrides;
}

/** What a session inherits when it has no override of its own. */
export type InheritedLayers = Omit<OverrideLayers, "session">;

export interface ResolvedSetting<T extends OverrideValue = OverrideValue> {
  /** Undefined when no layer sets it (e.g. no default model configured). */
  value: T | undefined;
  source: OverrideSource;
}

export interface OverrideSpec<T extends OverrideValue = OverrideValue> {
  /** How the value is read from text: `parseAssignment` turns `true`/`50` into a boolean/number first. */
  kind: "string" | "boolean" | "number";
  /** For messages: "a positive integer", … */
  expected: string;
  description: string;
  /** The checked (and canonical) value, or undefined when the value is not allowed. */
  normalise(value: OverrideValue): T | undefined;
}

const MAX_STRING = 200;

function text(value: OverrideValue): string | undefined {
  if (typeof value !== "string") return undefined;
  const trimmed = value.trim();
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (trimmed === "" || trimmed.length > MAX_STRING || /[\u0000-\u001f\u007f]/.test(trimmed))
    return undefined;
  return trimmed;
}

function integer(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: OverrideValue): number | undefined =>
    typeof value === "number" && Number.isInteger(value) && value >= min && value <= max ? value : undefined;
}

function canonicalTimeZone(value: OverrideValue): string | undefined {
  const name = text(value);
  if (name === undefined) return undefined;
  try {
    return new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
}

const positiveInteger = { kind: "number", expected: "a positive integer", normalise: integer(1) } as const;

/** The registry of known overrides. Names follow sessiond.yaml (snake_case, dotted by section). */
export const OVERRIDES: { readonly [N in OverrideName]: OverrideSpec<OverrideTypes[N]> } = {
  provider: {
    kind: "string",
    expected: "a provider name",
    description: "the LLM provider this session's turns use",
    normalise: text,
  },
  model: {
    kind: "string",
    expected: "a model name",
    description: "the model this session's turns use",
    normalise: text,
  },
  "compaction.enabled": {
    kind: "boolean",
    expected: "true or false",
    description: "whether this session is compacted",
    normalise: (value) => (typeof value === "boolean" ? value : undefined),
  },
  "compaction.max_messages": {
    ...positiveInteger,
    description: "compact when the context holds more messages than this",
  },
  "compaction.keep_recent": { ...positiveInteger, description: "messages kept verbatim after a compaction" },
  "compaction.max_tokens": {
    ...positiveInteger,
    description: "compact when the context's estimated tokens pass this",
  },
  "compaction.window_fraction": {
    kind: "number",
    expected: "a number greater than 0 and at most 1",
    description: "compact when the context passes this fraction of the model's window",
    normalise: (value) => (typeof value === "number" && value > 0 && value <= 1 ? value : undefined),
  },
  "compaction.source_max_chars": {
    ...positiveInteger,
    description: "the transcript given to the summariser is cut to this many characters",
  },
  "compaction.tool_result_max_chars": {
    ...positiveInteger,
    description: "tool results in that transcript are cut to this many characters",
  },
  "compaction.summary_max_chars": { ...positiveInteger, description: "a longer summary is refused" },
  "reset.mode": {
    kind: "string",
    expected: `one of ${RESET_MODES.join(", ")}`,
    description: "when this session starts over by itself",
    normalise: (value) => {
      const mode = typeof value === "string" ? value.trim().toLowerCase() : undefined;
      return RESET_MODES.find((m) => m === mode);
    },
  },
  "reset.at_hour": {
    kind: "number",
    expected: "an integer from 0 to 23",
    description: "the hour of a daily reset",
    normalise: integer(0, 23),
  },
  "reset.idle_minutes": { ...positiveInteger, description: "idle reset after this many minutes" },
  "reset.timezone": {
    kind: "string",
    expected: "an IANA time zone such as Europe/Paris or UTC",
    description: "the time zone of reset.at_hour",
    normalise: canonicalTimeZone,
  },
  "queue.mode": {
    kind: "string",
    expected: `one of ${QUEUE_MODES.join(", ")}`,
    description: "what a message arriving while a turn runs does",
    normalise: oneOf(QUEUE_MODES),
  },
  "queue.debounce_ms": {
    kind: "number",
    expected: "an integer from 0 to 600000",
    description: "quiet milliseconds before a queued batch starts",
    normalise: integer(0, 600_000),
  },
  "queue.cap": {
    kind: "number",
    expected: "a non-negative integer",
    description: "messages that may wait on this session (0: none, a busy session refuses)",
    normalise: integer(0),
  },
  "queue.drop": {
    kind: "string",
    expected: `one of ${DROP_POLICIES.join(", ")}`,
    description: "what goes when the queue is full",
    normalise: oneOf(DROP_POLICIES),
  },
};

function oneOf<T extends string>(values: readonly T[]) {
  return (value: OverrideValue): T | undefined => {
    const given = typeof value === "string" ? value.trim().toLowerCase() : undefined;
    return values.find((v) => v === given);
  };
}

export const OVERRIDE_NAMES = Object.keys(OVERRIDES) as readonly OverrideName[];

export function isOverrideName(name: string): name is OverrideName {
  return Object.hasOwn(OVERRIDES, name);
}

function invalid(message: string, details: Record<string, unknown>): SessiondError {
  return new SessiondError("INVALID_ARGUMENT", message, { details });
}

/** The name, checked: INVALID_ARGUMENT listing the known names otherwise. */
export function checkOverrideName(name: string): OverrideName {
  const trimmed = name.trim();
  if (isOverrideName(trimmed)) return trimmed;
  throw invalid(
    `unknown override ${JSON.stringify(trimmed)}; known overrides: ${OVERRIDE_NAMES.join(", ")}`,
    { field: "name", name: trimmed, known: [...OVERRIDE_NAMES] },
  );
}

/** A typed value (from an API or a config file), checked and made canonical; INVALID_ARGUMENT otherwise. */
export function checkOverrideValue<N extends OverrideName>(name: N, value: unknown): OverrideTypes[N] {
  const spec: OverrideSpec<OverrideTypes[N]> = OVERRIDES[name];
  const typed =
    typeof value === "string" || typeof value === "number" || typeof value === "boolean"
      ? spec.normalise(value)
      : undefined;
  if (typed === undefined) {
    throw invalid(`${name} must be ${spec.expected}, not ${JSON.stringify(value) ?? String(value)}`, {
      field: name,
      value,
    });
  }
  return typed;
}

const BOOLEANS: Record<string, boolean> = {
  true: true,
  yes: true,
  on: true,
  false: false,
  no: false,
  off: false,
};
const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/** Reads a value written as text (`50`, `0.5`, `true`, `Europe/Paris`) for the named override. */
export function parseOverrideValue<N extends OverrideName>(name: N, raw: string): OverrideTypes[N] {
  const spec = OVERRIDES[name];
  const trimmed = raw.trim();
  let value: OverrideValue | undefined = trimmed;
  if (spec.kind === "boolean") value = BOOLEANS[trimmed.toLowerCase()];
  else if (spec.kind === "number") value = NUMBER.test(trimmed) ? Number(trimmed) : undefined;
  if (value === undefined) {
    throw invalid(`${name} must be ${spec.expected}, not ${JSON.stringify(raw)}`, {
      field: name,
      value: raw,
    });
  }
  return checkOverrideValue(name, value);
}

export interface OverrideAssignment<N extends OverrideName = OverrideName> {
  name: N;
  value: OverrideTypes[N];
}

/** `model=gpt-4o` → `{name: "model", value: "gpt-4o"}`; `compaction.max_messages=80` → a number. */
export function parseAssignment(assignment: string): OverrideAssignment {
  const eq = assignment.indexOf("=");
  if (eq < 0) {
    throw invalid(`expected name=value, not ${JSON.stringify(assignment)}`, { field: "assignment" });
  }
  const name = checkOverrideName(assignment.slice(0, eq));
  const raw = assignment.slice(eq + 1);
  if (raw.trim() === "") {
    throw invalid(`${name} needs a value; to remove the override, unset it`, { field: name });
  }
  return { name, value: parseOverrideValue(name, raw) };
}

function layerValue<N extends OverrideName>(
  name: N,
  layer: Overrides | undefined,
  source: OverrideSource,
): OverrideTypes[N] | undefined {
  if (layer === undefined || !Object.hasOwn(layer, name)) return undefined;
  const value = layer[name] as OverrideValue;
  const typed = OVERRIDES[name].normalise(value);
  if (typed === undefined) {
    const fix = source === "session" ? "; unset it" : "";
    throw invalid(
      `${source} setting ${name} = ${JSON.stringify(value)} is invalid: it must be ${OVERRIDES[name].expected}${fix}`,
      { field: name, value, source },
    );
  }
  return typed;
}

const PRECEDENCE: ReadonlyArray<[keyof OverrideLayers, OverrideSource]> = [
  ["session", "session"],
  ["agent", "agent"],
  ["sender", "sender"],
  ["defaults", "default"],
];

/**
 * The value in force: session (the user's override) > agent > per-sender > default. A layer value that
 * is not valid for the name throws INVALID_ARGUMENT naming its layer rather than being skipped quietly.
 */
export function resolveSetting<N extends OverrideName>(
  name: N,
  layers: OverrideLayers,
): ResolvedSetting<OverrideTypes[N]> {
  checkOverrideName(name);
  for (const [layer, source] of PRECEDENCE) {
    const value = layerValue(name, layers[layer], source);
    if (value !== undefined) return { value, source };
  }
  return { value: undefined, source: "default" };
}

/** Every known setting, resolved (for `sessiond sessions show`). */
export function resolveSettings(layers: OverrideLayers): {
  [N in OverrideName]: ResolvedSetting<OverrideTypes[N]>;
} {
  const resolved: Partial<Record<OverrideName, ResolvedSetting>> = {};
  for (const name of OVERRIDE_NAMES) resolved[name] = resolveSetting(name, layers);
  return resolved as { [N in OverrideName]: ResolvedSetting<OverrideTypes[N]> };
}

export interface OverridePlan {
  /** Pass to `store.updateSession(key, patch)`; `{overrides: {name: null}}` removes the override. */
  patch: SessionPatch & { overrides: Record<string, OverrideValue | null> };
  /**
   * `set`: the override is stored. `removed`: no override is left, either by unset or because the value
   * equals what the session inherits. `unchanged`: the session already is in that state (the write can be
   * skipped).
   */
  effect: "set" | "removed" | "unchanged";
  /** The setting in force once the patch is applied. */
  effective: ResolvedSetting;
}

/**
 * Plans setting (`value`) or unsetting (`null`) one override on a session. Setting a value equal to what
 * the session would inherit without an override (agent > per-sender > default) removes the override
 * instead (ZeroClaw), so a later change of that inherited value reaches the session. Pure: the caller
 * writes `patch` with `store.updateSession`. Cross-field rules (compaction keep_recent below
 * max_messages) are checked where the policy is resolved, not here.
 */
export function planOverrideChange(
  session: Pick<Session, "overrides">,
  name: string,
  value: OverrideValue | null,
  inherited: InheritedLayers,
): OverridePlan {
  const known = checkOverrideName(name);
  const had = Object.hasOwn(session.overrides, known);
  const typed = value === null ? null : checkOverrideValue(known, value);
  const fallback = resolveSetting(known, inherited);
  if (typed === null || typed === fallback.value) {
    return {
      patch: { overrides: { [known]: null } },
      effect: had ? "removed" : "unchanged",
      effective: fallback,
    };
  }
  const same = had && session.overrides[known] === typed;
  return {
    patch: { overrides: { [known]: typed } },
    effect: same ? "unchanged" : "set",
    effective: { value: typed, source: "session" },
  };
}

const COMPACTION_FIELDS: ReadonlyArray<[OverrideName, keyof CompactionPolicy]> = [
  ["compaction.enabled", "enabled"],
  ["compaction.max_messages", "maxMessages"],
  ["compaction.keep_recent", "keepRecent"],
  ["compaction.max_tokens", "maxTokens"],
  ["compaction.window_fraction", "windowFraction"],
  ["compaction.source_max_chars", "sourceMaxChars"],
  ["compaction.tool_result_max_chars", "toolResultMaxChars"],
  ["compaction.summary_max_chars", "summaryMaxChars"],
];

/** (Partial) queue settings as an override layer (`queue.mode`, …), for the agent and default layers. */
export function queueOverrides(settings: Partial<QueueSettings> | undefined): Overrides {
  if (!settings) return {};
  return {
    ...(settings.mode !== undefined ? { "queue.mode": settings.mode } : {}),
    ...(settings.debounceMs !== undefined ? { "queue.debounce_ms": settings.debounceMs } : {}),
    ...(settings.cap !== undefined ? { "queue.cap": settings.cap } : {}),
    ...(settings.drop !== undefined ? { "queue.drop": settings.drop } : {}),
  };
}

/** A (partial) compaction policy as an override layer, for building the agent and default layers. */
export function compactionOverrides(policy: Partial<CompactionPolicy> | undefined): Overrides {
  const layer: Record<string, OverrideValue> = {};
  for (const [name, field] of COMPACTION_FIELDS) {
    const value = policy?.[field];
    if (value !== undefined) layer[name] = value;
  }
  return layer;
}
