import type { Handler } from "../connection.js";
import { ProtocolError } from "../protocol.js";
import * as branches from "./branches.js";
import * as chat from "./chat.js";
import * as conversations from "./conversations.js";
import * as search from "./search.js";
import * as sessions from "./sessions.js";
import * as turns from "./turns.js";
import * as watch from "./watch.js";

/** A method, the parameters it takes (name → what it is) and what it answers; unknown parameters are refused. */
export interface MethodSpec {
  handler: Handler;
  params: Readonly<Record<string, string>>;
  result: string;
}

const SESSION = "the session key (default: this connection's own)";

const METHODS: Readonly<Record<string, MethodSpec>> = {
  "sessions.list": {
    handler: sessions.list,
    params: { agent: "only this agent's sessions", limit: "1–1000", cursor: "nextCursor of the page before" },
    result: "{sessions: SessionList[], nextCursor?}",
  },
  "sessions.search": {
    handler: search.search,
    params: {
      q: 'the words to find; "a phrase" in quotes',
      agent: "only this agent's sessions",
      channel: "only this channel's sessions",
      prefix: "only keys that start with this",
      role: "user or assistant",
      since: "ISO 8601 date or ms: messages at or after",
      until: "ISO 8601 date or ms: messages before",
      archived: "include (default), exclude or only",
      limit: "1–100, default 20",
      cursor: "nextCursor of the page before",
    },
    result: "{hits: SearchHit[], nextCursor?, indexing, complete}",
  },
  "sessions.kill": {
    handler: sessions.kill,
    params: { session: SESSION },
    result: "{key, killed}: the key's running chat.send turns stop; its data stays",
  },
  "sessions.compact": { handler: sessions.compact, params: { session: SESSION }, result: "{key, summary}" },
  "sessions.fork": {
    handler: branches.fork,
    params: {
      session: SESSION,
      at_seq: "fork after this entry (default: the newest completed one)",
      to_key:
        "the new key (default: a web chat key: <key>/fork-<id> for an admin-… key, else admin-fork-<id>)",
    },
    result: "{key, session, forked_from, runtime_sessions} as POST /api/sessions/{key}/fork",
  },
  "sessions.rewind": {
    handler: branches.rewind,
    params: {
      session: SESSION,
      to_seq: "the first entry left out",
      expect_head: "the newest seq the rewind was computed on (else SESSION_CHANGED)",
    },
    result: "{session, archived, forked_from, runtime_sessions} as POST /api/sessions/{key}/rewind",
  },
  "sessions.branches": {
    handler: branches.branches,
    params: { session: SESSION },
    result: "{key, branches: [{kind, key, session}]} as GET /api/sessions/{key}/branches",
  },
  "sessions.subscribe": {
    handler: sessions.subscribe,
    params: { session: SESSION },
    result: "{key, subscribed: true}; then session.<type> events of that key",
  },
  "sessions.unsubscribe": {
    handler: sessions.unsubscribe,
    params: { session: SESSION },
    result: "{key, subscribed: false}",
  },
  "conversations.list": {
    handler: conversations.list,
    params: {
      agent: "only this agent's",
      sender: "only those this sender started",
      limit: "1–1000, default 1000",
      cursor: "nextCursor of the page before",
    },
    result: "{conversations: SessionList[], nextCursor?}",
  },
  "conversations.history": {
    handler: conversations.history,
    params: {
      session: SESSION,
      limit: "the newest this many entries: 1–1000, default 1000",
      before: "only entries with a seq below this",
      all: "also earlier generations (as the REST history's all)",
    },
    result: "{key, entries, more}: more when older entries exist (ask with before = the first seq)",
  },
  "chat.send": {
    handler: chat.send,
    params: {
      message: "the text (as /api/chat's message)",
      session: `${SESSION}; on channel web an admin-… key, else INVALID_KEY`,
      agent: "the agent to answer",
      incognito: "true: the session lives in the gateway's memory only (as /api/chat's incognito)",
    },
    result: "chat.delta {id, key, delta} events, then {key, reply, seq, notice?}",
  },
  "sessions.watch": {
    handler: watch.watch,
    params: {},
    result: "{watching: true}; then sessions.changed events for every session",
  },
  "sessions.unwatch": { handler: watch.unwatch, params: {}, result: "{watching: false}" },
  "turns.get": {
    handler: turns.get,
    params: { id: "the turn's id (an async POST's 202, or GET /api/inspect)" },
    result: "{id, key, state, admittedAt, reply?, …} as GET /api/turns/{id}",
  },
};

/** The handler of a method, refusing parameters it does not take; undefined for an unknown method. */
export function handlerFor(method: string): Handler | undefined {
  if (!Object.hasOwn(METHODS, method)) return undefined;
  const spec = METHODS[method] as MethodSpec;
  return (params, context) => {
    const unknown = Object.keys(params).filter((name) => !Object.hasOwn(spec.params, name));
    if (unknown.length > 0) {
      const takes = Object.keys(spec.params);
      const message = `${method} takes ${takes.length > 0 ? takes.join(", ") : "no parameters"}; unknown: ${unknown.join(", ")}`;
      return Promise.reject(new ProtocolError("INVALID_ARGUMENT", message));
    }
    return spec.handler(params, context);
  };
}

/** Every method with its parameters, for the OpenAPI document's `x-websocket` section. */
export function methodDocs(): Record<string, { params: Record<string, string>; result: string }> {
  return Object.fromEntries(
    Object.entries(METHODS).map(([name, spec]) => [
      name,
      { params: { ...spec.params }, result: spec.result },
    ]),
  );
}

export const METHOD_NAMES: readonly string[] = Object.keys(METHODS);
