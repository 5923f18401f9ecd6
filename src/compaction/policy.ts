import { SessiondError } from "../model/errors.js";
import type { OverrideValue } from "../model/session.js";

/** When to compact and how much to keep. Every field can be set per agent and per session. */
export interface CompactionPolicy {
  enabled: boolean;
  /** Compact when the context holds more non-system messages than this (ZeroClaw: 50). */
  maxMessages: number;
  /** Messages kept verbatim after a compaction (ZeroClaw: 20). */
  keepRecent: number;
  /** Compact when the context's estimated tokens pass this (CrabTalk: 100,000). */
  maxTokens: number;
  /** Compact when the context passes this fraction of the model's context window, when known. */
  windowFraction: number;
  /** The transcript given to the summariser is cut to this many characters (ZeroClaw: 12,000). */
  sourceMaxChars: number;
  /** Tool results in that transcript are cut to this many characters (CrabTalk: 1,024). */
  toolResultMaxChars: number;
  /** A summary longer than this is refused (ZeroClaw: 2,000). */
  summaryMaxChars: number;
  /** At most this many identifiers are required verbatim in a summary. */
  maxIdentifiers: number;
  /** The summariser gets this long. */
  timeoutMs: number;
  /** After a failure, wait this long before trying again; doubled per failure, at most an hour. */
  retryAfterMs: number;
}

export const DEFAULT_COMPACTION: CompactionPolicy = {
  enabled: true,
  maxMessages: 50,
  keepRecent: 20,
  maxTokens: 100_000,
  windowFraction: 0.75,
  sourceMaxChars: 12_000,
  toolResultMaxChars: 1_024,
  summaryMaxChars: 2_000,
  maxIdentifiers: 16,
  timeoutMs: 60_000,
  retryAfterMs: 30_000,
};

/** The session override names: `compaction.max_messages`, … (snake_case, as in sessiond.yaml). */
const OVERRIDE_NAMES: Record<string, keyof CompactionPolicy> = {
  "compaction.enabled": "enabled",
  "compaction.max_messages": "maxMessages",
  "compaction.keep_recent": "keepRecent",
  "compaction.max_tokens": "maxTokens",
  "compaction.window_fraction": "windowFraction",
  "compaction.source_max_chars": "sourceMaxChars",
  "compaction.tool_result_max_chars": "toolResultMaxChars",
  "compaction.summary_max_chars": "summaryMaxChars",
};

/** Default, then the agent's settings, then the session's overrides: the most specific wins. */
export function resolveCompactionPolicy(
  base: CompactionPolicy,
  agent: Partial<CompactionPolicy> | undefined,
  overrides: Record<string, OverrideValue>,
): CompactionPolicy {
  const policy: CompactionPolicy = { ...base, ...agent };
  const writable = policy as unknown as Record<string, OverrideValue>;
  for (const [name, field] of Object.entries(OVERRIDE_NAMES)) {
    const value = overrides[name];
    if (value === undefined) continue;
    if (typeof value !== typeof base[field]) {
      throw new SessiondError("INVALID_ARGUMENT", `override ${name} must be a ${typeof base[field]}`);
    }
    writable[field] = value;
  }
  return checkPolicy(policy);
}

export function checkPolicy(policy: CompactionPolicy): CompactionPolicy {
  const positive: Array<keyof CompactionPolicy> = [
    "maxMessages",
    "maxTokens",
    "sourceMaxChars",
    "toolResultMaxChars",
    "summaryMaxChars",
    "timeoutMs",
  ];
  for (const field of positive) {
    const value = policy[field];
    if (typeof value !== "number" || !(value > 0)) {
      throw new SessiondError("INVALID_ARGUMENT", `compaction ${field} must be a positive number`);
    }
  }
  if (!(policy.keepRecent >= 1 && policy.keepRecent < policy.maxMessages)) {
    throw new SessiondError(
      "INVALID_ARGUMENT",
      "compaction keepRecent must be at least 1 and below maxMessages",
    );
  }
  if (!(policy.windowFraction > 0 && policy.windowFraction <= 1)) {
    throw new SessiondError("INVALID_ARGUMENT", "compaction windowFraction must be in (0, 1]");
  }
  return policy;
}
