import { LRUCache } from "lru-cache";
import { forSession } from "../ledger/metered-model.js";
import type { CompactionEntry, EntryInput } from "../model/entry.js";
import { estimateTokens } from "../model/entry.js";
import { SessiondError } from "../model/errors.js";
import type { Session, StoredContext } from "../model/session.js";
import type { Summarizer, SummaryResult } from "../model/summarizer.js";
import type { AppendResult } from "../store/store.js";
import { withConversation } from "../tracing/spans.js";
import { chooseCut } from "./cut.js";
import type { CompactionPolicy } from "./policy.js";
import { capSummary } from "./summary-cap.js";
import { type CompactionWork, inThreadWork } from "./thread.js";
import { buildTranscript } from "./transcript.js";
import { type CompactionReason, dueReason, measureContext } from "./trigger.js";

export interface CompactionOutcome {
  reason: CompactionReason;
  entry: CompactionEntry;
}

export interface CompactRequest {
  key: string;
  context: StoredContext;
  policy: CompactionPolicy;
  /** The model's context window, for the window trigger. */
  contextWindow?: number;
  /** `manual` compacts whatever can be cut; otherwise only when a threshold is passed. */
  reason?: "manual";
  signal?: AbortSignal;
}

/**
 * How the compactor writes: the engine's append to the key's current session, which must still be
 * `expectSessionId`, the session the compaction was computed on (else `SESSION_CHANGED`).
 */
export type AppendToKey = (
  key: string,
  entries: EntryInput[],
  options: { expectSessionId: string },
) => Promise<AppendResult>;

/** How many keys' backoff the compactor remembers; an evicted key is simply tried again at its next turn. */
export const DEFAULT_MAX_BACKOFF_KEYS = 10_000;

interface Backoff {
  failures: number;
  notBefore: number;
}

/**
 * Decides when to compact, cuts, asks the summariser, checks its answer, and records it as a
 * `compaction` entry. A failure leaves the history as it was, records a `note`, and waits (doubling)
 * before the next try; it never resets anything. The caller holds the session's lane.
 */
export class Compactor {
  /** Keys whose last compaction failed; the least recently failed go first past the bound. */
  private readonly backoff: LRUCache<string, Backoff>;

  /** The summariser of sessions that choose none of their own. */
  private readonly summarizer: Summarizer;
  private readonly summarizerOf: (session: Session) => Summarizer;

  /** `summarizer` may pick per session (a session's own model override); a plain one serves every session. */
  constructor(
    summarizer: Summarizer | { default: Summarizer; of: (session: Session) => Summarizer },
    private readonly append: AppendToKey,
    private readonly now: () => number = Date.now,
    private readonly work: CompactionWork = inThreadWork,
    maxBackoffKeys = DEFAULT_MAX_BACKOFF_KEYS,
  ) {
    this.backoff = new LRUCache({ max: Math.max(1, maxBackoffKeys) });
    if ("summarize" in summarizer) {
      this.summarizer = summarizer;
      this.summarizerOf = () => summarizer;
    } else {
      this.summarizer = summarizer.default;
      this.summarizerOf = summarizer.of;
    }
  }

  get summarizerName(): string {
    return this.summarizer.name;
  }

  /** Compacts when due; resolves undefined when not due, backing off, or failed (the failure is noted). */
  async maybeCompact(request: CompactRequest): Promise<CompactionOutcome | undefined> {
    const reason = dueReason(measureContext(request.context), request.policy, request.contextWindow);
    if (!reason) return undefined;
    const waiting = this.backoff.get(request.key);
    if (waiting && this.now() < waiting.notBefore) return undefined;
    try {
      return await this.run(request, reason);
    } catch {
      // Nothing to cut, or a failure already noted in the session: the turn goes on uncompacted.
      return undefined;
    }
  }

  /** Compacts now (thresholds ignored); throws NOTHING_TO_COMPACT or COMPACTION_FAILED. */
  compact(request: CompactRequest): Promise<CompactionOutcome> {
    return this.run(request, "manual");
  }

  private async run(request: CompactRequest, reason: CompactionReason): Promise<CompactionOutcome> {
    const { key, context, policy } = request;
    // Only messages count: a title or note entry is not something a manual compaction can keep back.
    const messages = context.entries.filter((e) => e.type === "message" && e.role !== "system").length;
    const keep =
      reason === "manual" ? Math.min(policy.keepRecent, Math.max(1, messages - 1)) : policy.keepRecent;
    const cut = chooseCut(context.entries, keep);
    if (!cut) {
      throw new SessiondError("NOTHING_TO_COMPACT", `nothing in ${key} can be summarised yet`, {
        details: { key },
      });
    }
    const limits = { maxChars: policy.sourceMaxChars, toolResultMaxChars: policy.toolResultMaxChars };
    const transcript = buildTranscript(cut.summarised, limits, context.summary);
    const sourceText = [
      context.summary?.summary ?? "",
      ...cut.summarised.map((e) => (e.type === "message" ? e.content : "")),
    ].join("\n");
    const source = { text: sourceText, max: policy.maxIdentifiers };
    const summarizer = this.summarizerOf(context.session);
    const keeping = summarizer.summarizeKeeping?.bind(summarizer);
    let identifiers = keeping
      ? []
      : await this.work.identifiers(source.text, source.max, policy.summaryMaxChars);
    let summary: string;
    let model: string | undefined;
    try {
      const signal = anySignal(request.signal, AbortSignal.timeout(policy.timeoutMs));
      const asked = {
        transcript,
        maxChars: policy.summaryMaxChars,
        ...(context.summary ? { previousSummary: context.summary.summary } : {}),
        signal,
      };
      let result: SummaryResult;
      if (keeping) {
        const kept = await forSession(context.session, "compaction", () =>
          withConversation(context.session.id, "compaction", () => keeping(asked, source)),
        );
        identifiers = kept.identifiers;
        result = kept;
      } else {
        const ask = { ...asked, identifiers };
        result = await forSession(context.session, "compaction", () =>
          withConversation(context.session.id, "compaction", () => summarizer.summarize(ask)),
        );
      }
      summary = capSummary(result.summary.trim(), policy.summaryMaxChars, identifiers);
      model = result.model;
      checkSummary(summary, policy.summaryMaxChars, identifiers);
    } catch (error) {
      await this.fail(key, context.session.id, error, policy.retryAfterMs);
      throw new SessiondError("COMPACTION_FAILED", `compaction of ${key} failed: ${messageOf(error)}`, {
        cause: error,
        details: { key },
      });
    }
    const tokensBefore = measureContext(context).tokens;
    const tokensAfter = estimateTokens(summary) + measureContext({ entries: cut.kept }).tokens;
    const input: EntryInput = {
      type: "compaction",
      summary,
      fromSeq: 1,
      throughSeq: cut.throughSeq,
      firstKeptSeq: cut.firstKeptSeq,
      tokensBefore,
      tokensAfter,
      summarizer: summarizer.name,
      ...(model ? { model } : {}),
    };
    const { entries } = await this.append(key, [input], { expectSessionId: context.session.id });
    this.backoff.delete(key);
    return { reason, entry: entries[0] as CompactionEntry };
  }

  private async fail(key: string, sessionId: string, error: unknown, retryAfterMs: number): Promise<void> {
    const previous = this.backoff.get(key)?.failures ?? 0;
    const failures = previous + 1;
    const wait = Math.min(60 * 60_000, retryAfterMs * 2 ** previous);
    this.backoff.set(key, { failures, notBefore: this.now() + wait });
    const text = `compaction failed (${failures} in a row; next try in ${Math.round(wait / 1000)} s): ${messageOf(error)}. The history is unchanged.`;
    await this.append(key, [{ type: "note", level: "warn", code: "COMPACTION_FAILED", text }], {
      expectSessionId: sessionId,
    }).catch(() => undefined);
  }
}

function checkSummary(summary: string, maxChars: number, identifiers: readonly string[]): void {
  if (summary.length === 0) throw new Error("the summary is empty");
  if (summary.length > maxChars)
    throw new Error(`the summary has ${summary.length} characters, over the limit of ${maxChars}`);
  const missing = identifiers.filter((id) => !summary.includes(id));
  if (missing.length > 0)
    throw new Error(`the summary dropped identifiers: ${missing.slice(0, 5).join(", ")}`);
}

function anySignal(...signals: Array<AbortSignal | undefined>): AbortSignal {
  return AbortSignal.any(signals.filter((s): s is AbortSignal => s !== undefined));
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
