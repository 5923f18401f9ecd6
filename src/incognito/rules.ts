import { initForKey } from "../keys/index.js";

/**
 * One `session.incognito_for` rule: the sessions it makes incognito. Every field given must match: `key` a
 * pattern over the whole key (`*` stands for any run of characters, nothing else is special), `channel`
 * and `agent` what the key says of itself (`initForKey`, the reading a key gets when it arrives without a
 * message). A rule with no field matches nothing (the config refuses one).
 */
export interface IncognitoRule {
  key?: string;
  channel?: string;
  agent?: string;
}

/** The test a key goes through: true when one of the rules makes it incognito. */
export type IncognitoMatcher = (key: string) => boolean;

/** The rules as one test; routing's agents read the channel and agent out of a key as the engine does. */
export function incognitoMatcher(
  rules: readonly IncognitoRule[],
  routing: { defaultAgent: string; agents: readonly string[] },
): IncognitoMatcher {
  const compiled = rules
    .filter((r) => r.key !== undefined || r.channel !== undefined || r.agent !== undefined)
    .map((r) => ({ ...r, pattern: r.key === undefined ? undefined : keyPattern(r.key) }));
  if (compiled.length === 0) return () => false;
  return (key) => {
    let init: { channel: string; agent: string } | undefined;
    return compiled.some((rule) => {
      if (rule.pattern && !rule.pattern.test(key)) return false;
      if (rule.channel === undefined && rule.agent === undefined) return true;
      init ??= initForKey(key, routing.defaultAgent, routing.agents);
      if (rule.channel !== undefined && init.channel !== rule.channel) return false;
      return rule.agent === undefined || init.agent === rule.agent;
    });
  };
}

/** `*` is any run of characters; the pattern spans the whole key. */
function keyPattern(glob: string): RegExp {
  const body = glob
    .split("*")
    .map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join(".*");
  return new RegExp(`^${body}$`, "s");
}
