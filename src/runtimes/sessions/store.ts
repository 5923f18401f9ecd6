import type { CostBaseline, CostTotals, RunCost } from "./cost.js";

/** The runtime's own handle for one agent in one conversation (a session key). */
export interface RuntimeSessionRecord {
  agent: string;
  key: string;
  /** `claude-code`, `codex`, `a2a`… */
  runtime: string;
  /** Claude Code session id, Codex thread id, A2A context id. */
  id: string;
  /** More the runtime needs to resume (A2A: the task id while the task waits for input or auth). */
  data?: Record<string, string>;
  savedAt: number;
}

/** One run's cost, recorded once per run (a second record for the same run replaces the first). */
export interface RunCostRecord extends RunCost {
  agent: string;
  key: string;
  /** sessiond's input entry id of the run. */
  runId: string;
  runtime: string;
  at: number;
}

/** An agent marked "needs attention" in a conversation: its last run there failed. */
export interface AttentionMark {
  agent: string;
  key: string;
  error: string;
  at: number;
}

/**
 * Runtime sessions, cost baselines, the per-run cost ledger and needs-attention marks. Kept apart from the
 * session `Store`: they belong to runtimes, and are cleared by agent changes the store knows nothing of.
 */
export interface RuntimeSessionStore {
  get(agent: string, key: string): Promise<RuntimeSessionRecord | undefined>;
  /** Saves (or replaces) the one runtime session of (agent, key). */
  save(record: RuntimeSessionRecord): Promise<void>;
  /** The runtime sessions of one conversation, by agent name. */
  forKey(key: string): Promise<RuntimeSessionRecord[]>;
  /** Clears the runtime session of (agent, key) and its baseline: its next run there starts fresh. */
  clear(agent: string, key: string): Promise<void>;
  /** Clears every runtime session of an agent (and their baselines); returns the keys cleared. */
  clearAgent(agent: string): Promise<string[]>;
  /** Forgets everything of a conversation: its runtime sessions, baselines, costs and marks. */
  deleteKey(key: string): Promise<void>;
  /** Forgets everything of an agent. */
  deleteAgent(agent: string): Promise<void>;
  /** The cost baseline of (agent, key): the last running total reported there. */
  baseline(agent: string, key: string): Promise<CostBaseline | undefined>;
  /** Records a run's cost, and the baseline to keep when the figure was a running total, atomically. */
  recordCost(record: RunCostRecord, baseline?: CostBaseline): Promise<void>;
  costOf(agent: string, key: string, runId: string): Promise<RunCost | undefined>;
  totals(filter: { key?: string; agent?: string }): Promise<CostTotals>;
  /** Marks (agent, key) as needing attention with the error, or clears the mark with `undefined`. */
  setAttention(agent: string, key: string, error: string | undefined, at?: number): Promise<void>;
  attention(key: string): Promise<AttentionMark[]>;
  /** Keys with at least one mark. */
  attentionKeys(): Promise<Set<string>>;
  /** What an agent's working directory was when last seen (to notice a change across restarts). */
  lastCwd(agent: string): Promise<string | null | undefined>;
  setLastCwd(agent: string, cwd: string | null): Promise<void>;
  close(): Promise<void>;
}
