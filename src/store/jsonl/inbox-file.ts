import { dirname, join } from "node:path";
import { makeDirSync } from "../../fs/make-dir.js";
import type { InboxItem, InboxState } from "../../model/inbox.js";
import type { DriverInbox, InboxWrite } from "../driver.js";
import { MemoryInbox } from "../memory/inbox.js";
import type { ErasedSender } from "../scrub.js";
import { type FileSystem, fsyncDir, fsyncFailed, writeAll, writeFileAtomic } from "./durable-fs.js";

/**
 * `inbox.jsonl` in a JSONL store's `.sessiond/` folder: one JSON line per change (the item as it now is;
 * the last line of an id wins), and the items in memory. A torn last line (a crash mid-write) is cut off
 * on open; a complete line that does not parse is skipped and counted in `skipped`. Lines are written by
 * `apply` and made durable by `sync`/`syncAsync`, which the caller orders.
 */
export class InboxFile implements DriverInbox {
  /** Complete lines that could not be read back at open. */
  readonly skipped: number;
  readonly path: string;
  private readonly state = new MemoryInbox();
  private fd: number;
  /** An admission was written since the last fsync: the next durable batch waits for one. */
  private admitted = false;

  constructor(
    dir: string,
    private readonly fs: FileSystem,
  ) {
    this.path = join(dir, "inbox.jsonl");
    makeDirSync(dir, fs);
    const created = !fs.existsSync(this.path);
    this.skipped = created ? 0 : this.replay();
    this.fd = fs.openSync(this.path, "a");
    if (created) fsyncDir(dirname(this.path), fs);
  }

  get(id: string): InboxItem | undefined {
    const item = this.state.peek(id);
    return item && structuredClone(item);
  }

  stateOf(id: string): InboxState | undefined {
    return this.state.peek(id)?.state;
  }

  byDedupeKey(dedupeKey: string): InboxItem | undefined {
    const item = this.state.peekDedupe(dedupeKey);
    return item && structuredClone(item);
  }

  unfinished(): InboxItem[] {
    return this.state.all().filter((i) => i.state === "pending" || i.state === "running");
  }

  /** Forgets finished items, then rewrites the file with what is left (atomically: old or new file). */
  prune(before: number): number {
    return this.rewriteWithout(this.state.pruneNow(before));
  }

  /** Erasure: forgets every item of these keys and rewrites the file without them (atomically). */
  removeKeys(keys: readonly string[], senders: readonly ErasedSender[] = []): number {
    return this.rewriteWithout(this.state.removeKeys(new Set(keys), senders));
  }

  private rewriteWithout(pruned: number): number {
    if (pruned === 0) return 0;
    const lines = this.state.all().map((item) => `${JSON.stringify(item)}\n`);
    this.fs.closeSync(this.fd);
    writeFileAtomic(this.path, lines.join(""), true, this.fs);
    this.fd = this.fs.openSync(this.path, "a");
    this.admitted = false;
    return pruned;
  }

  /** Writes the lines of the changes that change something (no fsync), and takes them in memory. */
  apply(writes: readonly InboxWrite[]): void {
    let text = "";
    const changed: InboxItem[] = [];
    for (const write of writes) {
      if (write.kind === "admit") {
        const { item } = write;
        if (this.state.peek(item.id)) continue;
        if (item.dedupeKey !== undefined && this.state.peekDedupe(item.dedupeKey)) continue;
        text += `${write.envelopeJson === undefined ? JSON.stringify(item) : admittedLine(item, write.envelopeJson)}\n`;
        changed.push(item);
        this.admitted = true;
        continue;
      }
      if (!this.state.allows(write.id, write.state)) continue;
      const current = this.state.peek(write.id) as InboxItem;
      // The stored envelope goes on as it is; the outcome is the caller's, so copied.
      const next: InboxItem = {
        ...current,
        state: write.state,
        updatedAt: write.at,
        ...(write.outcome ? { outcome: structuredClone(write.outcome) } : {}),
      };
      text += `${JSON.stringify(next)}\n`;
      changed.push(next);
    }
    if (text === "") return;
    writeAll(this.fd, Buffer.from(text, "utf8"), undefined, this.fs);
    // Admitted items are made for their write (admitWrite), the others just above: kept, not copied again.
    for (const item of changed) this.state.adopt(item);
  }

  /** Whether an admission waits for its fsync (an end rides on the next one: recovery settles a lost end). */
  get waiting(): boolean {
    return this.admitted;
  }

  syncNow(): void {
    this.admitted = false;
    try {
      this.fs.fdatasyncSync(this.fd);
    } catch (error) {
      throw fsyncFailed(this.path, error);
    }
  }

  syncAsync(): Promise<void> {
    this.admitted = false;
    return new Promise<void>((resolve, reject) =>
      this.fs.fdatasync(this.fd, (error) => (error ? reject(fsyncFailed(this.path, error)) : resolve())),
    );
  }

  close(): void {
    this.fs.closeSync(this.fd);
  }

  /** Rebuilds the state from the file, cutting a torn last line; returns how many lines were skipped. */
  private replay(): number {
    const bytes = this.fs.readFileSync(this.path);
    const end = bytes.lastIndexOf(0x0a) + 1;
    if (end < bytes.length) {
      const fd = this.fs.openSync(this.path, "r+");
      try {
        this.fs.ftruncateSync(fd, end);
        this.fs.fsyncSync(fd);
      } finally {
        this.fs.closeSync(fd);
      }
    }
    let skipped = 0;
    for (const line of bytes.subarray(0, end).toString("utf8").split("\n")) {
      if (line === "") continue;
      try {
        const item = JSON.parse(line) as InboxItem;
        if (typeof item.id !== "string" || typeof item.state !== "string") throw new Error("not an item");
        this.state.put(item);
      } catch {
        skipped++;
      }
    }
    return skipped;
  }
}

/** An admitted item's line with its envelope's JSON as the caller made it (not stringified again). */
function admittedLine(item: InboxItem, envelopeJson: string): string {
  // Its other fields, without reading the envelope (admitWrite's item parses it only when read).
  const rest: Record<string, unknown> = {};
  for (const name of Object.keys(item))
    if (name !== "envelope") rest[name] = (item as unknown as Record<string, unknown>)[name];
  const head = JSON.stringify(rest);
  return `${head.slice(0, -1)},"envelope":${envelopeJson}}`;
}
