import { type ErrorCode, SessiondError } from "../../model/errors.js";
import type { InboxItem } from "../../model/inbox.js";
import type { IndexProgress } from "../../search/sqlite/search-index.js";
import type { GroupOutcome, InboxWrite, WriteGroup } from "../driver.js";
import type { ErasedSender } from "../scrub.js";
import type { Durability } from "../store.js";
import type { ScrubCounts } from "./scrub.js";

/** A SQLite store's file and how it is written. */
export interface SqliteFileOptions {
  path: string;
  durability: Durability;
  /** How long to wait for another process's write lock, ms. */
  busyTimeoutMs: number;
  pageCacheKb: number;
  /** Fold the journal once it holds this many rows. */
  foldThreshold: number;
  /** Batches of at least this many operations write through the journal. */
  journalMinBatch: number;
  /** Fold the journal after this long without writes, ms. */
  idleFoldMs: number;
  /** The least time between two checkpoints of the checkpoint thread, ms. */
  checkpointIntervalMs: number;
}

/** What the writer thread is started with (`workerData`). */
export interface WriterInit extends SqliteFileOptions {
  /** The `WriterSignals` buffer shared with the reading thread. */
  signals: SharedArrayBuffer;
}

/** A request to the writer thread, and the answer's value for each. */
export type WriterRequest =
  | { op: "commit"; groups: readonly WriteGroup[]; durable: boolean }
  | { op: "sync" }
  | { op: "prune"; before: number }
  | { op: "backfill"; sessions: number }
  | { op: "indexAll" }
  | { op: "scrub"; keys: string[]; senders: ErasedSender[] }
  | { op: "stats" }
  | { op: "close"; failed: boolean };

export interface WriterStats {
  /** WAL fsyncs done by the writer. */
  fsyncs: number;
  /** Checkpoints done by its checkpoint thread. */
  checkpoints: number;
}

export interface WriterAnswers {
  commit: SentOutcome[];
  sync: undefined;
  prune: number;
  backfill: IndexProgress;
  indexAll: undefined;
  scrub: ScrubCounts;
  stats: WriterStats;
  close: undefined;
}

/** An error as it crosses between threads: a structured clone keeps no class and no `code`. */
export interface SentError {
  code: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

export type SentOutcome = { ok: true } | { ok: false; stale: true } | { ok: false; error: SentError };

export type WriterMessage =
  | { id: number; value: unknown }
  | { id: number; error: SentError }
  /** A failure outside any request (a checkpoint's fsync): the store stops. */
  | { failure: SentError };

export function sendError(error: unknown): SentError {
  if (error instanceof SessiondError) {
    return {
      code: error.code,
      message: error.message,
      ...(error.details ? { details: { ...error.details } } : {}),
    };
  }
  return {
    code: "STORE_UNAVAILABLE",
    message: `the store's writer failed: ${error instanceof Error ? error.message : String(error)}`,
  };
}

export function receiveError(sent: SentError): SessiondError {
  return new SessiondError(sent.code, sent.message, sent.details ? { details: sent.details } : undefined);
}

export function sendOutcome(outcome: GroupOutcome): SentOutcome {
  return outcome.ok || "stale" in outcome ? outcome : { ok: false, error: sendError(outcome.error) };
}

export function receiveOutcome(sent: SentOutcome): GroupOutcome {
  return sent.ok || "stale" in sent ? sent : { ok: false, error: receiveError(sent.error) };
}

/**
 * The groups as the writer thread needs them: an admission whose envelope comes as JSON text leaves the
 * envelope itself out (it may be read lazily from that text, and would cross twice).
 */
export function sendGroups(groups: readonly WriteGroup[]): readonly WriteGroup[] {
  if (!groups.some((g) => g.inbox?.some(sentLighter))) return groups;
  return groups.map((g) => (g.inbox?.some(sentLighter) ? { ...g, inbox: g.inbox.map(lighter) } : g));
}

function sentLighter(write: InboxWrite): boolean {
  return write.kind === "admit" && write.envelopeJson !== undefined;
}

function lighter(write: InboxWrite): InboxWrite {
  if (write.kind !== "admit" || write.envelopeJson === undefined) return write;
  const { id, key, dedupeKey, state, admittedAt, updatedAt } = write.item;
  // The thread writes `envelopeJson` (inbox-table.ts) and never reads `item.envelope`.
  const item = { id, key, state, admittedAt, updatedAt, ...(dedupeKey === undefined ? {} : { dedupeKey }) };
  return { kind: "admit", item: item as InboxItem, envelopeJson: write.envelopeJson };
}
