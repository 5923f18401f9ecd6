import { join } from "node:path";
import type { Entry } from "../../model/entry.js";
import { encodeEntry } from "./crabtalk-format.js";
import type { Tracked } from "./directory-scan.js";
import { type FileSystem, writeFileAtomic } from "./durable-fs.js";
import type { EntryCache } from "./entry-cache.js";
import type { FileWrites } from "./file-writes.js";
import { parseSessionFile } from "./session-file.js";
import type { SessionFiles } from "./session-files.js";

/**
 * Erasure's rewrite of session files (`rewriteEntries`, docs/erasure.md). Once the batch is in the journal,
 * the journal is checkpointed into the files (its frames point at byte offsets of the old ones), then each
 * file is rewritten whole and replaces the old one atomically (temp file, fsync, rename, fsync of the
 * directory): the line of each erased entry carries its new body, the `kept` copies of erased messages
 * after a compaction marker are left out, and every other line stays byte for byte as it was (a line that
 * does not parse included). A failed rewrite stops the store: the erasure must not be acknowledged unwritten.
 */
export class EntryRewrite {
  private readonly due = new Map<Tracked, Map<number, Entry>>();

  constructor(
    private readonly dir: string,
    private readonly files: SessionFiles,
    private readonly writes: FileWrites,
    private readonly cache: EntryCache,
    private readonly fs: FileSystem,
  ) {}

  /** The batch being committed rewrites these entries of the session. */
  rewrite(tracked: Tracked, entries: readonly Entry[]): void {
    let bySeq = this.due.get(tracked);
    if (!bySeq) {
      bySeq = new Map();
      this.due.set(tracked, bySeq);
    }
    for (const entry of entries) bySeq.set(entry.seq, entry);
    this.cache.drop(tracked.session.id);
  }

  /** The batch failed before its journal frame: nothing of it is rewritten. */
  rollBack(): void {
    this.due.clear();
  }

  forget(tracked: Tracked): void {
    this.due.delete(tracked);
  }

  /** Rewrites the files erased in this batch; call once the batch is in the journal. */
  rewriteDue(): void {
    if (this.due.size === 0) return;
    const due = [...this.due];
    this.due.clear();
    this.writes.checkpoint();
    for (const [tracked, bySeq] of due) {
      if (this.files.get(tracked.session.id) !== tracked) continue;
      this.rewriteFile(tracked, bySeq);
    }
  }

  private rewriteFile(tracked: Tracked, bySeq: ReadonlyMap<number, Entry>): void {
    const path = join(this.dir, tracked.file);
    const bytes = this.fs.readFileSync(path);
    const { parsed } = parseSessionFile(tracked.file, bytes, tracked.session);
    const replaced = new Map<number, Entry>();
    for (const [seq, entry] of bySeq) {
      const offset = parsed?.offsets.get(seq);
      if (offset !== undefined) replaced.set(offset, entry);
    }
    const out: Buffer[] = [];
    let start = 0;
    while (start < bytes.length) {
      const end = bytes.indexOf(10, start);
      const stop = end === -1 ? bytes.length : end + 1;
      const entry = replaced.get(start);
      if (entry) out.push(Buffer.from(encodeEntry(entry)));
      else if (!isErasedCopy(bytes.toString("utf8", start, stop), bySeq))
        out.push(bytes.subarray(start, stop));
      start = stop;
    }
    const rewritten = Buffer.concat(out);
    // The descriptor would go on writing to the replaced file.
    this.files.closeFile(tracked.session.id);
    writeFileAtomic(path, rewritten, true, this.fs);
    tracked.size = rewritten.length;
    this.writes.touched.add(tracked);
    this.cache.drop(tracked.session.id);
  }
}

/** A `kept` copy (after a compaction marker) of an erased message. */
function isErasedCopy(line: string, bySeq: ReadonlyMap<number, Entry>): boolean {
  if (!line.includes('"kept"')) return false;
  try {
    const value = JSON.parse(line) as { kept?: unknown };
    return typeof value.kept === "number" && bySeq.has(value.kept);
  } catch {
    return false;
  }
}
