import { constants } from "node:fs";
import { join } from "node:path";
import type { Session } from "../../model/session.js";
import { writeClaimIdentity } from "./claim-identity.js";
import { settleKey, type Tracked } from "./directory-scan.js";
import type { FileSystem } from "./durable-fs.js";
import { fileFamily, parseStem, sessionFileName, stemOf } from "./file-names.js";

/** Session files kept open at most, beyond those waiting for their fsync. */
const MAX_OPEN_FILES = 256;

/**
 * The session files of the directory as this process knows them: by session id and by key, the highest
 * file seq of each `{agent}_{sender}` family, and the open file descriptors. Creating a file claims its
 * seq first, so two processes never create the same name.
 */
export class SessionFiles {
  readonly byId = new Map<string, Tracked>();
  private readonly byKey = new Map<string, Tracked[]>();
  private readonly byFile = new Map<string, Tracked>();
  /** The highest file seq seen per `{agent}_{sender_slug}` prefix. */
  private readonly maxSeq = new Map<string, number>();
  private readonly fds = new Map<string, number>();

  constructor(
    private readonly dir: string,
    private readonly claimsDir: string,
    private readonly fs: FileSystem,
  ) {}

  /** Takes in the files a directory scan found; each key's sessions are then ordered (settleKey). */
  adopt(found: readonly Tracked[]): void {
    for (const tracked of found) {
      this.track(tracked);
      this.noteSeq(tracked.file);
    }
    for (const list of this.byKey.values()) settleKey(list);
  }

  get(id: string): Tracked | undefined {
    return this.byId.get(id);
  }

  byFileName(file: string): Tracked | undefined {
    return this.byFile.get(file);
  }

  ofKey(key: string): readonly Tracked[] {
    return this.byKey.get(key) ?? [];
  }

  current(key: string): Tracked | undefined {
    return this.byKey.get(key)?.find((t) => t.session.state === "active");
  }

  all(): IterableIterator<Tracked> {
    return this.byId.values();
  }

  track(tracked: Tracked): void {
    this.byId.set(tracked.session.id, tracked);
    this.byFile.set(tracked.file, tracked);
    const list = this.byKey.get(tracked.session.key) ?? [];
    list.push(tracked);
    this.byKey.set(tracked.session.key, list);
  }

  /** Forgets a session in memory and closes its file: the file, if any, stays as it is. */
  untrack(tracked: Tracked): void {
    const { session } = tracked;
    this.byId.delete(session.id);
    if (this.byFile.get(tracked.file) === tracked) this.byFile.delete(tracked.file);
    const rest = (this.byKey.get(session.key) ?? []).filter((t) => t !== tracked);
    if (rest.length > 0) this.byKey.set(session.key, rest);
    else this.byKey.delete(session.key);
    this.closeFile(session.id);
  }

  /** The file was renamed (a title): found by its new name from now on. */
  renamed(tracked: Tracked, to: string): void {
    if (this.byFile.get(tracked.file) === tracked) this.byFile.delete(tracked.file);
    tracked.file = to;
    this.byFile.set(to, tracked);
  }

  /** Every key's list built again from the sessions as they are (after a rekey or a rollback). */
  rebuildKeys(): void {
    this.byKey.clear();
    for (const tracked of this.byId.values()) {
      const list = this.byKey.get(tracked.session.key) ?? [];
      list.push(tracked);
      this.byKey.set(tracked.session.key, list);
    }
    for (const list of this.byKey.values()) settleKey(list);
  }

  /** The sessions of `from` now belong to their (new) keys, as `sessions` says. */
  moveKey(from: string, sessions: readonly Session[]): void {
    this.byKey.delete(from);
    const moved: Tracked[] = [];
    for (const session of sessions) {
      const tracked = this.byId.get(session.id);
      if (!tracked) continue;
      tracked.session = session;
      moved.push(tracked);
    }
    const to = sessions[0]?.key;
    if (to !== undefined) this.byKey.set(to, moved);
  }

  /**
   * Creates the session's file under a seq no other writer can hold: the seq is claimed by creating
   * `.sessiond/claims/{prefix}_{seq}` with O_EXCL (kept after titles rename the file, so a titled
   * file's seq is never handed out again), then the file itself is created with O_EXCL too.
   */
  create(session: Session): Tracked {
    const { prefix } = fileFamily(session.agent, session.createdBy, session.key);
    let seq = (this.maxSeq.get(prefix) ?? 0) + 1;
    let fd: number;
    let file: string;
    for (; ; seq++) {
      if (!this.claim(join(this.claimsDir, `${prefix}_${seq}`), session)) continue;
      file = sessionFileName(prefix, seq);
      try {
        fd = this.fs.openSync(
          join(this.dir, file),
          constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_APPEND,
        );
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
    }
    this.maxSeq.set(prefix, seq);
    this.fds.set(session.id, fd);
    const tracked: Tracked = { session, file, foreign: false, size: 0, mtimeMs: 0 };
    this.track(tracked);
    return tracked;
  }

  fdFor(tracked: Tracked): number {
    let fd = this.fds.get(tracked.session.id);
    if (fd === undefined) {
      fd = this.fs.openSync(join(this.dir, tracked.file), constants.O_RDWR | constants.O_APPEND);
      this.fds.set(tracked.session.id, fd);
    }
    return fd;
  }

  /** The open descriptor of the session's file, if it is open. */
  openFd(id: string): number | undefined {
    return this.fds.get(id);
  }

  /** The file is replaced by another (a rewritten metadata line): the old descriptor is closed. */
  closeFile(id: string): void {
    const fd = this.fds.get(id);
    if (fd !== undefined) this.fs.closeSync(fd);
    this.fds.delete(id);
  }

  /** Closes descriptors beyond the bound, except those of `keep` (files waiting for their fsync). */
  trim(keep: ReadonlySet<string>): void {
    for (const id of this.fds.keys()) {
      if (this.fds.size <= MAX_OPEN_FILES) break;
      if (keep.has(id)) continue;
      this.closeFile(id);
    }
  }

  /** Closes every descriptor; one that fails to close does not keep the others open. */
  closeAll(): void {
    for (const fd of this.fds.values()) {
      try {
        this.fs.closeSync(fd);
      } catch {
        // Closed as far as it goes.
      }
    }
    this.fds.clear();
  }

  lastGeneration(key: string): number {
    let max = 0;
    for (const t of this.byKey.get(key) ?? []) max = Math.max(max, t.session.generation);
    return max;
  }

  private noteSeq(file: string): void {
    const stem = parseStem(stemOf(file));
    if (stem) this.maxSeq.set(stem.prefix, Math.max(this.maxSeq.get(stem.prefix) ?? 0, stem.seq));
  }

  private claim(path: string, session: Session): boolean {
    let fd: number;
    try {
      fd = this.fs.openSync(path, "wx");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw error;
    }
    try {
      writeClaimIdentity(this.fs, fd, session);
      return true;
    } finally {
      this.fs.closeSync(fd);
    }
  }
}
