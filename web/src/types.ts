/** The gateway's JSON, as the dashboard reads it (fields it does not show are left out). */

export type OverrideValue = string | number | boolean;

export interface Session {
  id: string;
  key: string;
  agent: string;
  channel: string;
  chatType?: string;
  createdBy: string;
  generation: number;
  state: "active" | "archived";
  title: string;
  createdAt: number;
  lastActivityAt: number;
  archivedAt?: number;
  entryCount: number;
  messageCount: number;
  approxTokens: number;
  contextFromSeq: number;
  lastCompactionSeq?: number;
  overrides: Record<string, OverrideValue>;
  /** Set by gateways that track it (issue 6); absent otherwise. */
  needsAttention?: boolean;
  /** A fork or a rewound generation: its entries up to `seq` are those of session `sessionId` of `key`. */
  forkedFrom?: ForkOrigin;
  /** Kept in the gateway's memory only: never exported or shared, gone at its restart. */
  incognito?: boolean;
}

export interface ForkOrigin {
  key: string;
  sessionId: string;
  seq: number;
}

/** One line of `GET /api/sessions/{key}/branches`. */
export interface Branch {
  kind: "current" | "rewound" | "archived" | "fork";
  key: string;
  session: Session;
}

/** The agents whose runtime sessions followed a fork or rewind, and those whose were cleared. */
export interface RuntimeSessionsAnswer {
  followed: string[];
  cleared: string[];
}

/** What `POST …/fork` answers. */
export interface ForkAnswer {
  key: string;
  session: Session;
  forked_from: { key: string; session_id: string; seq: number };
  runtime_sessions: RuntimeSessionsAnswer;
}

export interface SessionPage {
  sessions: Session[];
  nextCursor?: string;
  /** Text searches only: how many sessions were read, and whether the scan limit stopped it. */
  scanned?: number;
  partial?: boolean;
}

export interface RuntimeSession {
  agent: string;
  runtime: string;
  id: string;
  shortId: string;
  savedAt: number;
}

export interface Cost {
  usd: number;
  pricedRuns: number;
  unpricedRuns: number;
  ambiguousRuns: number;
  /** First runs seen on a session that already existed: "cost not measured". */
  notMeasuredRuns: number;
}

export interface SessionDetail {
  session: Session;
  queued: number;
  runtimeSessions?: RuntimeSession[];
  cost?: Cost;
  needsAttention?: boolean;
  /** LoCrew's work sessions: agents that may write without asking here until `until`. */
  workSessions?: WorkSession[];
}

export interface WorkSession {
  agent: string;
  key: string;
  startedAt: number;
  until: number;
}

export interface Sender {
  id: string;
  name?: string;
  username?: string;
}

interface Header {
  id: string;
  sessionId: string;
  seq: number;
  ts: number;
}

export interface ToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export type Entry = Header &
  (
    | {
        type: "message";
        role: "user" | "assistant" | "system" | "tool";
        content: string;
        sender?: Sender;
        toolCalls?: ToolCall[];
      }
    | {
        type: "compaction";
        summary: string;
        fromSeq: number;
        throughSeq: number;
        firstKeptSeq: number;
        tokensBefore: number;
        tokensAfter: number;
        summarizer: string;
        model?: string;
      }
    | { type: "reset"; cause: string; nextSessionId?: string }
    | { type: "title"; title: string; by?: string }
    | { type: "note"; text: string; level?: "info" | "warn" | "error"; code?: string }
    | { type: "usage"; model?: string; inputTokens?: number; outputTokens?: number; costUsd?: number }
  );

export interface HourBucket {
  at: number;
  activeSessions: number;
  messages: number;
  tokens: number;
  compactions: number;
}

export interface Overview {
  from: number;
  to: number;
  hours: HourBucket[];
  totals: { sessions: number; messages: number; tokens: number; compactions: number };
  truncated: boolean;
}

export interface AgentInfo {
  name: string;
  runtime: string;
  cwd?: string;
  model?: string;
  cost: Cost;
}

export interface Agents {
  agents: AgentInfo[];
  defaultAgent: string;
}

/** What `sessions.changed` events carry. */
export interface SessionChange {
  type: "appended" | "updated" | "reset" | "deleted" | "turn.started" | "turn.finished";
  key: string;
  session?: Session;
}

export interface SearchHit {
  key: string;
  sessionId: string;
  generation: number;
  archived: boolean;
  seq: number;
  role: "user" | "assistant";
  ts: number;
  agent: string;
  channel: string;
  /** Escaped HTML whose only tags are `<mark>` (drawn as text runs, see pages/search.tsx). */
  snippet: string;
}

export interface SearchResult {
  hits: SearchHit[];
  nextCursor?: string;
  indexing: boolean;
  /** False when the search ran out of its time budget: other messages may match. */
  complete: boolean;
}

/** One group of GET /api/cost: `usd` null when no call of it has a known price. */
export interface CostTotal {
  group: string;
  calls: number;
  usd: number | null;
  unpricedCalls: number;
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

export interface CostReport {
  by: "session" | "agent" | "day";
  since?: string;
  groups: CostTotal[];
  total: CostTotal;
  lowerBound: boolean;
}
