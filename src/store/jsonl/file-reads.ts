import { join } from "node:path";
import type { Entry } from "../../model/entry.js";
import type { ChangeWatch } from "./change-watch.js";
import type { Tracked } from "./directory-scan.js";
import type { FileSystem } from "./durable-fs.js";
import type { EntryCache, Loaded } from "./entry-cache.js";
import type { FileWrites } from "./file-writes.js";
import { type LineProblem, parseSessionFile } from "./session-file.js";
import type { SessionFiles } from "./session-files.js";
import { applySidecar, type Sidecars } from "./sidecar.js";
import { hasSize } from "./size-probe.js";

/**
 * How the JSONL driver reads session files: a session's entries (cached), a file another process appended
 * to, and memory put back as the disk holds it after a batch that could not be written.
 */
export class FileReads {
  /** Called for a session whose file another process changed, once it is read again (the search index). */
  onReread: ((tracked: Tracked) => void) | undefined;

  constructor(
    private readonly dir: string,
    private readonly files: SessionFiles,
    private readonly writes: FileWrites,
    private readonly cache: EntryCache,
    private readonly sidecars: Sidecars,
    private readonly changes: ChangeWatch,
    private readonly fs: FileSystem,
    private readonly report: (problem: LineProblem) => void,
  ) {}

  /** The session's entries, read from its file the first time (torn tail cut back). */
  load(tracked: Tracked): Loaded {
    const id = tracked.session.id;
    const cached = this.cache.get(id);
    if (cached) return cached;
    this.writes.writeQueuedOf(id);
    const written = this.fs.readFileSync(join(this.dir, tracked.file));
    // Inside a batch, what its earlier groups queued for the file is not written yet: read it as if it were.
    const queued = this.writes.pending.chunks.get(id)?.text;
    const bytes = queued === undefined ? written : Buffer.concat([written, Buffer.from(queued)]);
    const { parsed } = parseSessionFile(tracked.file, bytes, tracked.session);
    return this.cache.put(id, parsed?.entries ?? [], bytes.length);
  }

  /**
   * The session's entries as its file holds them now, with the file's size and mtime, for the search
   * index: the bytes this process still holds for it are written first; nothing is cached.
   */
  forIndex(tracked: Tracked): { entries: Entry[]; size: number; mtimeMs: number } {
    this.writes.writeQueuedOf(tracked.session.id);
    const path = join(this.dir, tracked.file);
    const bytes = this.fs.readFileSync(path);
    const { mtimeMs } = this.fs.statSync(path);
    const { parsed } = parseSessionFile(tracked.file, bytes, tracked.session);
    return { entries: parsed?.entries ?? [], size: bytes.length, mtimeMs };
  }

  /**
   * Reads the session's file again when another process appended to it since this one last did (the
   * file is longer than this process wrote it), so new entries number after theirs; true when it did.
   * Simultaneous writes from two processes to one session are not serialised: one process should own a key.
   */
  refresh(tracked: Tracked): boolean {
    if (!this.changes.needsCheck(tracked.file)) return false;
    // A file this process has not opened (a read of a session not in memory) is not opened for the check.
    const open = this.files.openFd(tracked.session.id);
    const expected = this.writes.writtenSize(tracked);
    if (
      open === undefined
        ? this.fs.statSync(join(this.dir, tracked.file)).size === expected
        : hasSize(this.fs, open, expected)
    ) {
      this.changes.checked(tracked.file);
      return false;
    }
    const fd = this.files.fdFor(tracked);
    // If this process still held bytes for the file, the other one wrote while both were writing to the
    // session, which nothing serialises: this process's bytes go after theirs.
    this.writes.writeQueuedOf(tracked.session.id);
    const size = this.fs.fstatSync(fd).size;
    const { parsed, problems } = parseSessionFile(
      tracked.file,
      this.fs.readFileSync(join(this.dir, tracked.file)),
      tracked.session,
    );
    for (const problem of problems) this.report(problem);
    if (!parsed) return false;
    applySidecar(parsed.session, this.sidecars.read(parsed.session.id));
    tracked.session = parsed.session;
    // Where this process's next bytes land (O_APPEND), torn bytes of the other writer included.
    tracked.size = size;
    this.cache.drop(parsed.session.id);
    this.onReread?.(tracked);
    return true;
  }

  /**
   * Memory as the disk holds it, for every session the failed batch touched; `discard` forgets the
   * sessions it created.
   */
  rollBack(discard: (tracked: Tracked) => void): void {
    const { chunks, sidecars, removals, created } = this.writes.pending;
    for (const tracked of [...created]) discard(tracked);
    const isCreated = new Set(created);
    const touched = new Set<Tracked>();
    for (const { tracked } of chunks.values()) touched.add(tracked);
    for (const id of sidecars.keys()) {
      const tracked = this.files.get(id);
      if (tracked) touched.add(tracked);
    }
    for (const tracked of removals) {
      if (!this.files.get(tracked.session.id)) this.files.track(tracked);
      touched.add(tracked);
    }
    for (const tracked of touched) if (!isCreated.has(tracked)) this.readBack(tracked);
    // Keys may have moved (a rekey) or lost sessions (a delete): every key's list is built again.
    this.files.rebuildKeys();
  }

  /** The session as its file, the bytes queued for it and its sidecar say; its entries are read again when needed. */
  private readBack(tracked: Tracked): void {
    const id = tracked.session.id;
    this.cache.drop(id);
    const queued = this.writes.queuedOf(id);
    const written = this.fs.readFileSync(join(this.dir, tracked.file));
    const bytes = queued ? Buffer.concat([written, ...queued]) : written;
    const { parsed } = parseSessionFile(tracked.file, bytes, tracked.session);
    if (!parsed) throw new Error(`${tracked.file} holds no session`);
    applySidecar(parsed.session, this.sidecars.read(id));
    tracked.session = parsed.session;
  }
}
