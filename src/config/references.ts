import { resetRuleFromSettings } from "../lifecycle/reset-policy.js";
import { validateResetTriggers } from "../lifecycle/triggers.js";
import type { ConfigFile, ResetRuleSettings } from "./schema.js";

/** A problem the schema cannot see, as `path: message`. */
export interface ConfigProblem {
  path: string;
  message: string;
  /** The line in the config file, when it can be placed. */
  line?: number;
}

type Loose = Record<string, unknown>;
const isObject = (value: unknown): value is Loose =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * Names of models that `models:` does not define, read from the raw file so they are reported together with
 * the schema's own problems. Claude Code and Codex agents take their runtime's own model names.
 */
export function modelReferenceProblems(raw: unknown): ConfigProblem[] {
  if (!isObject(raw)) return [];
  const known = isObject(raw.models) ? Object.keys(raw.models) : [];
  const list = known.join(", ") || "none";
  const problems: ConfigProblem[] = [];
  const check = (path: string, name: unknown) => {
    if (typeof name === "string" && name !== "" && !known.includes(name)) {
      problems.push({ path, message: `no model named ${JSON.stringify(name)} (models: ${list})` });
    }
  };
  if (Array.isArray(raw.agents)) {
    raw.agents.forEach((agent, i) => {
      if (!isObject(agent)) return;
      if (agent.runtime === undefined || agent.runtime === "model") check(`agents.${i}.model`, agent.model);
    });
  }
  if (isObject(raw.compaction)) check("compaction.model", raw.compaction.model);
  if (isObject(raw.titles)) check("titles.model", raw.titles.model);
  return problems;
}

/** An agent id given twice: the second would silently replace the first's settings. */
export function duplicateAgentProblems(raw: unknown): ConfigProblem[] {
  if (!isObject(raw) || !Array.isArray(raw.agents)) return [];
  const first = new Map<string, number>();
  const problems: ConfigProblem[] = [];
  raw.agents.forEach((agent, i) => {
    const id = isObject(agent) ? agent.id : undefined;
    if (typeof id !== "string") return;
    const earlier = first.get(id);
    if (earlier === undefined) first.set(id, i);
    else
      problems.push({
        path: `agents.${i}.id`,
        message: `agent id ${JSON.stringify(id)} is already agents.${earlier}`,
      });
  });
  return problems;
}

/** Reset rules (time zones, `mode: idle` without minutes) and reset triggers, each problem with its path. */
export function lifecycleProblems(file: ConfigFile): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const attempt = (path: string, check: () => void) => {
    try {
      check();
    } catch (error) {
      problems.push({ path, message: (error as Error).message });
    }
  };
  const s = file.session ?? {};
  const rule = (path: string, settings: ResetRuleSettings | undefined) => {
    if (settings) attempt(path, () => resetRuleFromSettings(settings));
  };
  const byType = (path: string, rules: Partial<Record<string, ResetRuleSettings>>) => {
    for (const [type, settings] of Object.entries(rules)) rule(`${path}.${type}`, settings);
  };
  if (s.reset) {
    const { keep_archive: _k, ...reset } = s.reset;
    rule("session.reset", reset);
  }
  if (s.reset_by_type) byType("session.reset_by_type", s.reset_by_type);
  for (const [channel, rules] of Object.entries(s.reset_by_channel ?? {})) {
    const path = `session.reset_by_channel.${channel}`;
    if ("mode" in rules) rule(path, rules);
    else byType(path, rules);
  }
  const triggers = s.reset_triggers;
  if (triggers) attempt("session.reset_triggers", () => validateResetTriggers(triggers));
  return problems;
}
