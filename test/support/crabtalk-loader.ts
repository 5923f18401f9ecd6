import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

/**
 * CrabTalk v0.0.19's own loader, re-implemented rule by rule from its source
 * (`crates/core/src/runtime/conversation.rs` and `crates/core/src/model/{message,tool}.rs` at `901b0e1b`;
 * `reference/peer-formats.md` §2): what CrabTalk itself would load from a directory sessiond wrote.
 * Kept apart from sessiond's reader on purpose: a test compares the two.
 */

/** serde's view of one `Message`: missing fields default, skipped (empty) ones are absent when written. */
export interface CrabMessage {
  role: string;
  content: string;
  reasoning_content: string;
  name: string;
  tool_call_id: string;
  tool_calls: CrabToolCall[];
  agent: string;
}

export interface CrabToolCall {
  id: string;
  type: string;
  function: { name: string; arguments: string };
}

export interface CrabMeta {
  agent: string;
  created_by: string;
  created_at: string;
  title: string;
  uptime_secs: number;
}

/** `sender_slug`: Unicode alphanumerics and `-` kept with ASCII-only lowercasing, runs of anything else one `-`. */
export function senderSlug(s: string): string {
  return [...s]
    .map((c) => (/^[\p{Alphabetic}\p{N}-]$/u.test(c) ? asciiLower(c) : "-"))
    .join("")
    .split("-")
    .filter((part) => part !== "")
    .join("-");
}

function asciiLower(c: string): string {
  return c >= "A" && c <= "Z" ? c.toLowerCase() : c;
}

/**
 * `find_latest_conversation`: the file of `{agent}_{slug}_` with the highest leading seq. The agent is used as
 * is (not slugged). Any matching name without leading digits makes the whole lookup return nothing (Rust's `?`
 * inside the loop), as does any name that is not UTF-8 (not reproducible from Node's string names).
 */
export function findLatestConversation(dir: string, agent: string, createdBy: string): string | undefined {
  const prefix = `${agent}_${senderSlug(createdBy)}_`;
  let best: { seq: number; path: string } | undefined;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) continue;
    if (!name.startsWith(prefix) || !name.endsWith(".jsonl")) continue;
    const digits = /^[0-9]*/.exec(name.slice(prefix.length))?.[0] ?? "";
    const seq = Number(digits);
    if (digits === "" || seq > 0xffff_ffff) return undefined;
    if (!best || seq > best.seq) best = { seq, path };
  }
  return best?.path;
}

/** `load_context`: the metadata, then the context from the last compact marker (as a user message) on. */
export function loadContext(path: string): { meta: CrabMeta; messages: CrabMessage[] } {
  const [metaLine, ...rest] = readFileSync(path, "utf8").split("\n");
  if (metaLine === undefined || metaLine === "") throw new Error("empty conversation file");
  const meta = parseMeta(metaLine);
  const lines = rest.filter((line) => line.trim() !== "");
  let lastCompact: number | undefined;
  lines.forEach((line, i) => {
    if (line.includes('"compact"') && parseCompact(line) !== undefined) lastCompact = i;
  });
  const messages: CrabMessage[] = [];
  lines.slice(lastCompact ?? 0).forEach((line, i) => {
    const compact = i === 0 && lastCompact !== undefined ? parseCompact(line) : undefined;
    if (compact !== undefined) {
      messages.push(message({ role: "user", content: compact.compact }));
      return;
    }
    const parsed = parseMessage(line);
    if (parsed) messages.push(parsed);
  });
  return { meta, messages };
}

/** `load_archives`: every compact marker after line 1, in file order. */
export function loadArchives(path: string): Array<{ title: string; summary: string; archived_at: string }> {
  const lines = readFileSync(path, "utf8").split("\n").slice(1);
  return lines.flatMap((line) => {
    const compact = line.includes('"compact"') ? parseCompact(line) : undefined;
    return compact
      ? [{ title: compact.title, summary: compact.compact, archived_at: compact.archived_at }]
      : [];
  });
}

function parseMeta(line: string): CrabMeta {
  const value: unknown = JSON.parse(line);
  if (!isObject(value)) throw new Error("metadata line is not an object");
  const meta = {
    agent: requiredString(value, "agent"),
    created_by: requiredString(value, "created_by"),
    created_at: requiredString(value, "created_at"),
    title: defaultString(value, "title"),
    uptime_secs: value.uptime_secs === undefined ? 0 : value.uptime_secs,
  };
  if (typeof meta.uptime_secs !== "number" || !Number.isInteger(meta.uptime_secs) || meta.uptime_secs < 0)
    throw new Error("uptime_secs is not a u64");
  return meta as CrabMeta;
}

/** The untagged `ConversationLine::Compact` variant: `compact` required, the others default. */
function parseCompact(line: string): { compact: string; title: string; archived_at: string } | undefined {
  try {
    const value: unknown = JSON.parse(line);
    if (!isObject(value)) return undefined;
    return {
      compact: requiredString(value, "compact"),
      title: defaultString(value, "title"),
      archived_at: defaultString(value, "archived_at"),
    };
  } catch {
    return undefined;
  }
}

/** `serde_json::from_str::<Message>`: `role` required; strings default to ""; unknown keys ignored. */
export function parseMessage(line: string): CrabMessage | undefined {
  try {
    const value: unknown = JSON.parse(line);
    if (!isObject(value)) return undefined;
    const calls = value.tool_calls === undefined ? [] : value.tool_calls;
    if (!Array.isArray(calls)) return undefined;
    return {
      role: requiredString(value, "role"),
      content: defaultString(value, "content"),
      reasoning_content: defaultString(value, "reasoning_content"),
      name: defaultString(value, "name"),
      tool_call_id: defaultString(value, "tool_call_id"),
      tool_calls: calls.map(parseToolCall),
      agent: defaultString(value, "agent"),
    };
  } catch {
    return undefined;
  }
}

/** `ToolCall`: `id`, `type` default ""; `function.name` defaults, `function.arguments` has no default. */
function parseToolCall(value: unknown): CrabToolCall {
  if (!isObject(value) || !isObject(value.function)) throw new Error("tool call without a function");
  return {
    id: defaultString(value, "id"),
    type: defaultString(value, "type"),
    function: {
      name: defaultString(value.function, "name"),
      arguments: requiredString(value.function, "arguments"),
    },
  };
}

function message(fields: Partial<CrabMessage> & { role: string }): CrabMessage {
  return {
    content: "",
    reasoning_content: "",
    name: "",
    tool_call_id: "",
    tool_calls: [],
    agent: "",
    ...fields,
  };
}

function requiredString(value: Record<string, unknown>, field: string): string {
  const v = value[field];
  if (typeof v !== "string") throw new Error(`${field} is not a string`);
  return v;
}

function defaultString(value: Record<string, unknown>, field: string): string {
  const v = value[field];
  if (v === undefined) return "";
  if (typeof v !== "string") throw new Error(`${field} is not a string`);
  return v;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
