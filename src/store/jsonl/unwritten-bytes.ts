import type { Tracked } from "./directory-scan.js";

export interface Unwritten {
  tracked: Tracked;
  chunks: Buffer[];
  bytes: number;
  /** The batch that queued the oldest of them. */
  since: number;
}

/**
 * Bytes already in the journal that are not yet in their session files, per session, oldest first.
 * Writing a session's bytes of several batches at once takes one write instead of one per batch.
 */
export class UnwrittenBytes {
  private readonly bySession = new Map<string, Unwritten>();
  /** Sessions that hold `fullBytes` or more. */
  private readonly full = new Set<Unwritten>();
  private batch = 0;
  /** Bytes queued over all sessions. */
  private total = 0;

  /**
   * `fullBytes`: a session holding this many is written at the next chance; `totalBytes`: all are, once
   * the sessions together hold this many.
   */
  constructor(
    private readonly fullBytes: number,
    private readonly totalBytes: number,
  ) {}

  get size(): number {
    return this.bySession.size;
  }

  /** Starts the next batch: what earlier ones queued grows one batch older. */
  nextBatch(): void {
    this.batch++;
  }

  add(tracked: Tracked, bytes: Buffer): void {
    this.total += bytes.length;
    let queued = this.bySession.get(tracked.session.id);
    if (queued) {
      queued.chunks.push(bytes);
      queued.bytes += bytes.length;
    } else {
      queued = { tracked, chunks: [bytes], bytes: bytes.length, since: this.batch };
      this.bySession.set(tracked.session.id, queued);
    }
    if (queued.bytes >= this.fullBytes) this.full.add(queued);
  }

  /** How many of the session's bytes are queued. */
  bytesOf(sessionId: string): number {
    return this.bySession.get(sessionId)?.bytes ?? 0;
  }

  /** The session's queued bytes, left queued. */
  peek(sessionId: string): readonly Buffer[] | undefined {
    return this.bySession.get(sessionId)?.chunks;
  }

  take(sessionId: string): Unwritten | undefined {
    const queued = this.bySession.get(sessionId);
    if (queued) this.remove(queued);
    return queued;
  }

  /**
   * The sessions whose oldest bytes were queued `batches` or more batches ago, and those that are full;
   * all of them when together they hold too much.
   */
  takeDue(batches: number): Unwritten[] {
    if (this.total >= this.totalBytes) return this.takeAll();
    const due = [...this.full];
    for (const queued of this.bySession.values()) {
      if (this.batch - queued.since < batches) break;
      if (!this.full.has(queued)) due.push(queued);
    }
    for (const queued of due) this.remove(queued);
    return due;
  }

  /** Queues again what a failed write left of `queued`: all but its first `written` bytes. */
  putBack(queued: Unwritten, written: number): void {
    const rest = Buffer.concat(queued.chunks).subarray(written);
    if (rest.length === 0) return;
    const id = queued.tracked.session.id;
    const later = this.bySession.get(id);
    if (later) this.remove(later);
    const again: Unwritten = {
      tracked: queued.tracked,
      chunks: later ? [rest, ...later.chunks] : [rest],
      bytes: rest.length + (later?.bytes ?? 0),
      since: queued.since,
    };
    this.bySession.set(id, again);
    this.total += again.bytes;
    if (again.bytes >= this.fullBytes) this.full.add(again);
  }

  takeAll(): Unwritten[] {
    const all = [...this.bySession.values()];
    this.bySession.clear();
    this.full.clear();
    this.total = 0;
    return all;
  }

  private remove(queued: Unwritten): void {
    this.total -= queued.bytes;
    this.bySession.delete(queued.tracked.session.id);
    this.full.delete(queued);
  }
}
