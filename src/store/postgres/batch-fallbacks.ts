import { redactSecrets } from "../../secrets/redact.js";
import { messageOf } from "../group-commit.js";

/** Why a batch left its quicker path: the statement's SQLSTATE (when the server gave one) and its message, redacted. */
export interface BatchFallback {
  code?: string;
  message: string;
}

export interface BatchFallbackStats {
  /** Batches that left the one-statement path, or the few-statements one, because it failed. */
  count: number;
  /** The first of them. */
  first?: BatchFallback;
}

/**
 * Counts the batches that fell back to a slower path (batch-commit.ts): one-statement → few statements →
 * group by group. Expected now and then (another process moved a key on), a sign of trouble when it keeps
 * rising. The first one is reported (`onFallback`; default a process warning, code
 * SESSIOND_PG_BATCH_FALLBACK), the others only counted.
 */
export class BatchFallbacks {
  private readonly stats: BatchFallbackStats = { count: 0 };

  constructor(
    private readonly onFallback: (fallback: BatchFallback) => void = (f) =>
      process.emitWarning(
        `a PostgreSQL batch fell back to a slower path (counted from now on): ${f.message}`,
        { code: "SESSIOND_PG_BATCH_FALLBACK" },
      ),
  ) {}

  fellBack(error: unknown): void {
    this.stats.count++;
    if (this.stats.first) return;
    const code = (error as { code?: unknown }).code;
    const first: BatchFallback = { message: redactSecrets(messageOf(error)) };
    if (typeof code === "string") first.code = code;
    this.stats.first = first;
    this.onFallback(first);
  }

  snapshot(): BatchFallbackStats {
    const { count, first } = this.stats;
    return first ? { count, first: { ...first } } : { count };
  }
}
