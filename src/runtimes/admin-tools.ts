import type { Entry } from "../model/entry.js";
import { isSessiondError } from "../model/errors.js";
import type {
  RuntimeToolCall,
  RuntimeToolDefinition,
  RuntimeToolResult,
  RuntimeTools,
} from "../model/runtime.js";
import { plainSnippet } from "../search/plain-snippet.js";
import { searchStore } from "../search/searchable.js";
import type { SessionPage, SessionQuery } from "../store/store.js";

/** The most sessions or entries one admin tool call returns. */
export const ADMIN_TOOL_MAX_LIMIT = 50;
const DEFAULT_LIMIT = 20;

/**
 * Agent tools that read other people's sessions (behaviours.md §8): offered only in a human admin's
 * conversation.
 */
export const ADMIN_TOOL_DEFINITIONS: readonly RuntimeToolDefinition[] = [
  {
    type: "function",
    function: {
      name: "sessions_list",
      description: "List stored sessions, most recently active first.",
      parameters: {
        type: "object",
        properties: {
          agent: { type: "string", description: "Only this agent's sessions." },
          limit: { type: "integer", minimum: 1, maximum: ADMIN_TOOL_MAX_LIMIT },
        },
        additionalProperties: false,
      },
    },
  },
  {
    type: "function",
    function: {
      name: "sessions_history",
      description: "The latest messages of one session, oldest first.",
      parameters: {
        type: "object",
        properties: {
          key: { type: "string", description: "The session key, as sessions_list gives it." },
          limit: { type: "integer", minimum: 1, maximum: ADMIN_TOOL_MAX_LIMIT },
        },
        required: ["key"],
        additionalProperties: false,
      },
    },
  },
  {
    type: "function",
    function: {
      name: "sessions_search",
      description: "Search what users and agents said in stored sessions, best match first.",
      parameters: {
        type: "object",
        properties: {
          query: { type: "string", description: 'The words to find (all of them; "a phrase" in quotes).' },
          agent: { type: "string", description: "Only this agent's sessions." },
          limit: { type: "integer", minimum: 1, maximum: ADMIN_TOOL_MAX_LIMIT },
        },
        required: ["query"],
        additionalProperties: false,
      },
    },
  },
];

/** What the admin tools read: the engine's session list and history. */
export interface SessionReader {
  sessions: { list(query: SessionQuery): Promise<SessionPage> };
  history(key: string, options: { limit: number }): Promise<Entry[]>;
  /** The store, searched when it has a search index (`sessions_search`). */
  store: { readonly backend: string };
  /** Incognito sessions are not offered: what a tool reads is stored with the reader's session. */
  isIncognito?(key: string): boolean;
}

export interface AdminToolDeps {
  engine: SessionReader;
  admins: readonly string[];
}

/**
 * The tools for a turn whose sender is `senderId`: the admin tools when the sender is a listed admin, else
 * none. Either way the executor refuses (a failed result) any call to a tool not offered in this turn, so a
 * call the model forges in a non-admin conversation reads nothing.
 */
export function adminToolsFor(senderId: string | undefined, deps: AdminToolDeps): RuntimeTools {
  const admin = senderId !== undefined && deps.admins.includes(senderId);
  const definitions = admin ? ADMIN_TOOL_DEFINITIONS.map((d) => structuredClone(d)) : [];
  const offered = new Set(definitions.map((d) => d.function.name));
  return {
    definitions,
    async execute(call) {
      if (!offered.has(call.name)) return refused(call);
      const args = parseArguments(call.arguments);
      if (args === undefined) return failure("the arguments are not a JSON object");
      try {
        if (call.name === "sessions_list") return await sessionsList(deps.engine, args);
        if (call.name === "sessions_search") return await sessionsSearch(deps.engine, args);
        return await sessionsHistory(deps.engine, args);
      } catch (error) {
        if (isSessiondError(error)) return failure(error.message);
        throw error;
      }
    },
  };
}

function refused(call: RuntimeToolCall): RuntimeToolResult {
  return failure(`the tool ${JSON.stringify(call.name)} is not available in this conversation`);
}

function failure(message: string): RuntimeToolResult {
  return { content: JSON.stringify({ error: message }), failed: true };
}

function parseArguments(text: string): Record<string, unknown> | undefined {
  if (text.trim() === "") return {};
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** A limit in 1..50; undefined when the argument is not a positive integer. */
function limitOf(value: unknown): number | undefined {
  if (value === undefined) return DEFAULT_LIMIT;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) return undefined;
  return Math.min(value, ADMIN_TOOL_MAX_LIMIT);
}

async function sessionsList(
  engine: SessionReader,
  args: Record<string, unknown>,
): Promise<RuntimeToolResult> {
  const limit = limitOf(args.limit);
  if (limit === undefined) return failure("limit must be a positive integer");
  if (args.agent !== undefined && typeof args.agent !== "string") return failure("agent must be a string");
  const page = await engine.sessions.list({
    sort: "activity",
    limit,
    ...(typeof args.agent === "string" ? { agent: args.agent } : {}),
  });
  const shown = page.sessions.filter((s) => !engine.isIncognito?.(s.key));
  const sessions = shown.map((s) => ({
    key: s.key,
    agent: s.agent,
    title: s.title,
    messageCount: s.messageCount,
    createdAt: new Date(s.createdAt).toISOString(),
    lastActivityAt: new Date(s.lastActivityAt).toISOString(),
  }));
  return { content: JSON.stringify({ sessions }) };
}

async function sessionsHistory(
  engine: SessionReader,
  args: Record<string, unknown>,
): Promise<RuntimeToolResult> {
  if (typeof args.key !== "string" || args.key === "") return failure("key must be a non-empty string");
  const limit = limitOf(args.limit);
  if (limit === undefined) return failure("limit must be a positive integer");
  if (engine.isIncognito?.(args.key)) return failure(`session ${args.key} is incognito: it cannot be read`);
  const entries = await engine.history(args.key, { limit });
  const messages = entries.flatMap((e) =>
    e.type === "message" && !e.autoInjected
      ? [{ seq: e.seq, role: e.role, content: e.content, at: new Date(e.ts).toISOString() }]
      : [],
  );
  return { content: JSON.stringify({ key: args.key, messages }) };
}

async function sessionsSearch(
  engine: SessionReader,
  args: Record<string, unknown>,
): Promise<RuntimeToolResult> {
  if (typeof args.query !== "string" || args.query.trim() === "")
    return failure("query must be a non-empty string");
  const limit = limitOf(args.limit);
  if (limit === undefined) return failure("limit must be a positive integer");
  if (args.agent !== undefined && typeof args.agent !== "string") return failure("agent must be a string");
  const result = await searchStore(engine.store, {
    text: args.query,
    limit,
    ...(typeof args.agent === "string" ? { agent: args.agent } : {}),
  });
  const hits = result.hits.map((h) => ({
    key: h.key,
    generation: h.generation,
    archived: h.archived,
    seq: h.seq,
    role: h.role,
    at: new Date(h.ts).toISOString(),
    text: plainSnippet(h.snippet),
  }));
  // While the index is being built, or when the search ran out of time, some messages are not found: the
  // model is told so.
  return {
    content: JSON.stringify({
      hits,
      ...(result.indexing ? { indexing: true } : {}),
      ...(result.complete ? {} : { complete: false }),
    }),
  };
}
