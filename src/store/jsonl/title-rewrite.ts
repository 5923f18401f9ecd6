import { join } from "node:path";
import { isSessiondError } from "../../model/errors.js";
import type { Session } from "../../model/session.js";
import { metadataLine } from "./crabtalk-format.js";
import type { Tracked } from "./directory-scan.js";
import { type FileSystem, fsyncDir, writeFileAtomic } from "./durable-fs.js";
import { parseStem, sessionFileName, stemOf } from "./file-names.js";
import type { FileWrites } from "./file-writes.js";
import type { SessionFiles } from "./session-files.js";

/**
 * A file bigger than this keeps its metadata line when titled (only the name changes): rewriting it would
 * copy it whole, in memory. Titles are set after the first exchange, when a file is a few KB.
 */
const REWRITE_MAX_BYTES = 4 * 1024 * 1024;

/**
 * The title where CrabTalk reads it (peer-formats.md §2.4, `set_title`): line 1's `title`, and the file
 * renamed `{agent}_{sender}_{seq}_{title_slug}.jsonl` (not renamed when the slug is empty). Line 1 is
 * rewritten atomically, after the batch that set the title is in the journal: the journal is drained into
 * the files first (its frames point at byte offsets of the file), then the new file replaces the old one
 * under the old name (temp file, fsync, rename, fsync of the directory) and is renamed (fsync of the
 * directory). A crash at any point leaves one file, the old or the new; one whose line 1 was rewritten but
 * not yet renamed, or titled but not yet rewritten, is finished at the next open.
 */
export class TitleRewrite {
  /** Titled in the batch being committed. */
  private readonly batch = new Set<Tracked>();
  /** Titled, not rewritten yet (a rewrite that failed is tried again after the next batch). */
  private readonly due = new Set<Tracked>();

  constructor(
    private readonly dir: string,
    private readonly files: SessionFiles,
    private readonly writes: FileWrites,
    private readonly fs: FileSystem,
  ) {}

  /** Before the directory is read: temp files of rewrites that never reached their rename are removed. */
  removeTemps(): void {
    for (const name of this.fs.readdirSync(this.dir))
      if (name.startsWith(".") && name.endsWith(".tmp"))
        this.fs.rmSync(join(this.dir, name), { force: true });
  }

  /** After the directory is read: titled sessions of this store whose file has no titled name yet. */
  resume(): void {
    for (const tracked of this.files.all())
      if (!tracked.foreign && tracked.session.title !== "" && tracked.file !== titledName(tracked))
        this.due.add(tracked);
  }

  /** The session's title changed in the batch being committed. */
  titled(tracked: Tracked): void {
    this.batch.add(tracked);
  }

  /** The batch failed before its journal frame: its titles were never set. */
  rollBack(): void {
    this.batch.clear();
  }

  forget(tracked: Tracked): void {
    this.batch.delete(tracked);
    this.due.delete(tracked);
  }

  /**
   * Rewrites the files titled so far; call once the batch is in the journal. Only a failed fsync (the store
   * stops) is thrown: a file that could not be rewritten keeps its old line 1 and name until the next try.
   */
  rewriteDue(): void {
    for (const tracked of this.batch) this.due.add(tracked);
    this.batch.clear();
    if (this.due.size === 0) return;
    try {
      this.writes.checkpoint();
      for (const tracked of [...this.due]) {
        if (this.files.get(tracked.session.id) === tracked) this.rewrite(tracked);
        this.due.delete(tracked);
      }
    } catch (error) {
      if (isSessiondError(error, "STORE_FAILED")) throw error;
    }
  }

  private rewrite(tracked: Tracked): void {
    const from = join(this.dir, tracked.file);
    const to = titledName(tracked);
    if (tracked.size <= REWRITE_MAX_BYTES) {
      const bytes = this.fs.readFileSync(from);
      const end = bytes.indexOf(10);
      if (end !== -1) {
        const line = Buffer.from(metadataWithTitle(bytes.toString("utf8", 0, end), tracked.session));
        // The descriptor would go on writing to the replaced file.
        this.files.closeFile(tracked.session.id);
        writeFileAtomic(from, Buffer.concat([line, bytes.subarray(end)]), true, this.fs);
        tracked.size = line.length + bytes.length - end;
        this.writes.touched.add(tracked);
      }
    }
    if (to === tracked.file) return;
    this.fs.renameSync(from, join(this.dir, to));
    fsyncDir(this.dir, this.fs);
    this.files.renamed(tracked, to);
  }
}

/** The name CrabTalk gives the file once titled. */
function titledName(tracked: Tracked): string {
  const stem = parseStem(stemOf(tracked.file));
  return stem ? sessionFileName(stem.prefix, stem.seq, tracked.session.title) : tracked.file;
}

/** Line 1 with the title: its fields kept as they are (a CrabTalk file stays CrabTalk's), else written anew. */
function metadataWithTitle(line: string, session: Session): string {
  try {
    const value: unknown = JSON.parse(line);
    if (typeof value === "object" && value !== null && !Array.isArray(value) && "agent" in value)
      return JSON.stringify({ ...value, title: session.title });
  } catch {
    // A damaged line 1 is written anew from the session.
  }
  return JSON.stringify(metadataLine(session));
}
