import { join } from "node:path";
import { makeDirSync } from "../../fs/make-dir.js";
import type { Entry } from "../../model/entry.js";
import { isSessiondError, SessiondError } from "../../model/errors.js";
import type { Session } from "../../model/session.js";
import type { SearchOptions } from "../../search/budget.js";
import type { NormalisedSearch, SearchResult } from "../../search/query.js";
import type {
  ForeignChanges,
  GroupOutcome,
  KeptContext,
  KeyHead,
  StoreDriver,
  WriteGroup,
} from "../driver.js";
import type { KeyedSession } from "../encryption/data-keys.js";
import { messageOf } from "../group-commit.js";
import type { ErasedSender } from "../scrub.js";
import type { NormalisedQuery } from "../session-query.js";
import type { Durability, EntryRange, SessionScan } from "../store.js";
import { ChangeWatch } from "./change-watch.js";
import { asStoreError, guarded } from "./directory-error.js";
import { scanDirectory } from "./directory-scan.js";
import { DriverSearch, type JsonlSearchOption } from "./driver-search.js";
import type { FileSystem } from "./durable-fs.js";
import { EntryCache } from "./entry-cache.js";
import { EntryRewrite } from "./entry-rewrite.js";
import { FileReads } from "./file-reads.js";
import { FileWrites } from "./file-writes.js";
import { GroupApply } from "./group-apply.js";
import { InboxFile } from "./inbox-file.js";
import { saveDirectoryIndex } from "./index-snapshot.js";
import { replayJournals } from "./journal-replay.js";
import { META_DIR } from "./meta-dir.js";
import type { JsonlIndexProgress } from "./search-rebuild.js";
import type { LineProblem } from "./session-file.js";
import { SessionFiles } from "./session-files.js";
import { SessionReads } from "./session-reads.js";
import { Sidecars } from "./sidecar.js";
import { TitleRewrite } from "./title-rewrite.js";

export interface JsonlDriverOptions {
  path: string;
  durability: Durability;
  fs: FileSystem;
  cacheSize: number;
  cacheBytes: number;
  report: (problem: LineProblem) => void;
  /** Whether nothing waits to be committed. */
  idle: () => boolean;
  /** Keep the search index (`.sessiond/search.db`); reports each step of its rebuild. */
  search: JsonlSearchOption;
  /**
   * Called once the directory's sessions are known, before anything is rewritten or indexed, with one that
   * has a wrapped data key (if any): throwing refuses the open (a sealed store without its key).
   */
  checkSealed?: (sample: Session | undefined) => void;
}

const NONE: ForeignChanges = { kind: "none" };
const ALL: ForeignChanges = { kind: "all" };

/**
 * Sessions as a directory of CrabTalk session files (behaviours.md §2), one file per session, under the
 * log core. A batch's bytes go through a write-ahead journal (file-writes.ts) whose one fsync
 * acknowledges it; an index of the directory (written at close) makes opening 100,000 sessions a matter
 * of stat calls. Another process may append to the same files: the directory's change events say which
 * to compare (change-watch.ts), and a file longer than this process wrote it is read again.
 */
export class JsonlDriver implements StoreDriver {
  readonly backend = "jsonl";
  readonly rewritesEntries = true;
  readonly path: string;
  readonly stats: { filesRead: number; filesFromIndex: number };
  private readonly metaDir: string;
  private readonly fs: FileSystem;
  private readonly sidecars: Sidecars;
  private readonly files: SessionFiles;
  private readonly writes: FileWrites;
  private readonly titles: TitleRewrite;
  private readonly rewrites: EntryRewrite;
  private readonly cache: EntryCache;
  private readonly changes: ChangeWatch;
  private readonly reads: FileReads;
  private readonly groups: GroupApply;
  private readonly sessionReads: SessionReads;
  private readonly searching: DriverSearch;
  private inboxFile: InboxFile | undefined;
  private closed = false;

  constructor(private readonly options: JsonlDriverOptions) {
    this.path = options.path;
    this.fs = options.fs;
    this.metaDir = join(this.path, META_DIR);
    const claimsDir = join(this.metaDir, "claims");
    this.sidecars = new Sidecars(join(this.metaDir, "meta"), this.fs);
    this.files = new SessionFiles(this.path, claimsDir, this.fs);
    this.cache = new EntryCache(options.cacheSize, options.cacheBytes);
    this.writes = new FileWrites(this.path, this.metaDir, this.files, this.sidecars, this.fs, options.idle);
    this.titles = new TitleRewrite(this.path, this.files, this.writes, this.fs);
    try {
      for (const dir of [this.path, this.metaDir, claimsDir, join(this.metaDir, "meta")])
        makeDirSync(dir, this.fs);
      replayJournals(this.metaDir, this.path, options.report, this.fs);
      this.titles.removeTemps();
      const scan = scanDirectory(this.path, this.metaDir, this.sidecars, options.report, this.fs);
      this.stats = { filesRead: scan.filesRead, filesFromIndex: scan.filesFromIndex };
      this.files.adopt(scan.tracked);
      options.checkSealed?.(this.sealedSample());
      this.titles.resume();
      this.titles.rewriteDue();
    } catch (error) {
      try {
        this.writes.close(false);
      } catch {
        // Never opened: nothing of it on disk but, at most, an empty file a later open removes.
      }
      throw asStoreError(error, this.path);
    }
    this.changes = new ChangeWatch(this.path, options.search !== false);
    this.reads = new FileReads(
      this.path,
      this.files,
      this.writes,
      this.cache,
      this.sidecars,
      this.changes,
      this.fs,
      options.report,
    );
    this.rewrites = new EntryRewrite(this.path, this.files, this.writes, this.cache, this.fs);
    this.groups = new GroupApply(
      this.path,
      this.files,
      this.writes,
      this.reads,
      this.cache,
      this.titles,
      this.rewrites,
      this.fs,
    );
    this.sessionReads = new SessionReads(this.path, this.files, this.reads);
    this.searching = new DriverSearch(
      this.path,
      this.metaDir,
      this.files,
      this.reads,
      this.changes,
      this.fs,
      options.idle,
      options.search,
    );
  }

  /** One session that has a wrapped data key, if any (the store checks its key against it at open). */
  sealedSample(): Session | undefined {
    for (const tracked of this.files.all())
      if ((tracked.session as KeyedSession).dataKey) return tracked.session;
    return undefined;
  }

  cacheStats(): { sessions: number; bytes: number } {
    return this.cache.stats();
  }

  // ——— reads (session-reads.ts) ———

  loadKey(key: string): KeyHead {
    return this.sessionReads.loadKey(key);
  }

  generations(key: string): Session[] {
    return this.sessionReads.generations(key);
  }

  sessionById(id: string): Session | undefined {
    return this.sessionReads.sessionById(id);
  }

  findIdempotent(session: Session, keys: readonly string[]): Map<string, Entry> {
    return this.sessionReads.findIdempotent(session, keys);
  }

  readEntries(session: Session, range: EntryRange & { order: "asc" | "desc" }): Entry[] {
    return this.sessionReads.readEntries(session, range);
  }

  loadKept(session: Session): KeptContext {
    return this.sessionReads.loadKept(session);
  }

  forksOf(sessionIds: readonly string[]): Session[] {
    return this.sessionReads.forksOf(sessionIds);
  }

  list(query: NormalisedQuery): Session[] {
    return this.sessionReads.list(query);
  }

  scan(scan: SessionScan & { limit: number }): Session[] {
    return this.sessionReads.scan(scan);
  }

  /** The keys whose files another process appended to since the last call (read again here). */
  foreignChanges(): ForeignChanges {
    if (this.closed) return NONE;
    const changed = this.changes.take();
    const keys = this.searching.takeChangedKeys();
    // Unseen changes: each key's file is compared when the core next loads the key (`loadKey`).
    if (changed === "all") return ALL;
    if (changed.size === 0) return keys.length > 0 ? { kind: "keys", keys } : NONE;
    for (const file of changed) {
      const tracked = this.files.byFileName(file);
      if (tracked && this.guard(() => this.reads.refresh(tracked))) keys.push(tracked.session.key);
    }
    return keys.length > 0 ? { kind: "keys", keys } : NONE;
  }

  /**
   * The inbox of admitted inputs, `.sessiond/inbox.jsonl`, written with the batches (`WriteGroup.inbox`);
   * opened on first use, so a process that runs no turns leaves it alone.
   */
  get inbox(): InboxFile {
    this.inboxFile ??= this.guard(() => new InboxFile(this.metaDir, this.fs));
    return this.inboxFile;
  }

  // ——— writes ———

  commit(groups: readonly WriteGroup[], durable: boolean): GroupOutcome[] {
    this.writes.beginBatch();
    let failed: SessiondError | undefined;
    try {
      const outcomes = groups.map((group) => {
        const outcome = this.groups.applyGroup(group);
        if (!outcome.ok && "error" in outcome && isSessiondError(outcome.error, "STORE_FAILED"))
          failed ??= outcome.error;
        return outcome;
      });
      if (failed) throw failed;
      this.writes.write();
      const inbox = groups.flatMap((group, i) => (outcomes[i]?.ok && group.inbox) || []);
      if (inbox.length > 0) this.inbox.apply(inbox);
      this.rewrites.rewriteDue();
      this.titles.rewriteDue();
      this.searching.committed(groups, outcomes);
      // A batch the core does not make durable (relaxed appends) is done here.
      if (!durable) this.writes.settleNow(this.options.durability === "strict");
      return outcomes;
    } catch (error) {
      throw this.failedBatch(error);
    } finally {
      this.writes.endBatch();
    }
  }

  /** Messages whose text matches, best first (driver-search.ts). */
  search(q: NormalisedSearch, options?: SearchOptions): Promise<SearchResult> {
    return this.searching.search(q, options);
  }

  searchProgress(): JsonlIndexProgress {
    return this.searching.progress();
  }

  /** The journal's fsync, and the inbox file's beside it when an admission waits for one. */
  durableBarrier(): Promise<void> {
    const journal = this.writes.barrier();
    if (!this.inboxFile?.waiting) return journal;
    return Promise.all([journal, this.inboxFile.syncAsync()]).then(() => undefined);
  }

  syncNow(): void {
    this.writes.settleNow(true);
    if (this.inboxFile?.waiting) this.inboxFile.syncNow();
  }

  sync(): void {
    try {
      this.writes.checkpoint();
      this.inboxFile?.syncNow();
    } catch (error) {
      throw asStoreError(error, this.path);
    }
  }

  /**
   * Erasure, after the keys' sessions were deleted: a checkpoint, then the journal cut after its first
   * frame, the keys' inbox items gone from inbox.jsonl, and the search index rewritten.
   */
  scrub(
    keys: readonly string[],
    senders: readonly ErasedSender[] = [],
  ): { inboxRows: number; searchTerms: number } {
    return this.guard(() => {
      this.writes.checkpoint();
      this.writes.journal.shrink();
      const inboxRows = this.inbox.removeKeys(keys, senders);
      return { inboxRows, searchTerms: this.searching.scrub() };
    });
  }

  /** What the journal holds goes to the session files. */
  flush(): void {
    if (!this.closed) this.guard(() => this.writes.writeAll());
  }

  /**
   * Checkpoints and releases everything. A store that failed (an fsync did) keeps its journal for the
   * next open to replay, and writes no index.
   */
  close(failed: boolean): void {
    if (this.closed) return;
    this.closed = true;
    let checkpointed = false;
    try {
      if (!failed) this.writes.checkpoint();
      checkpointed = !failed;
    } catch (error) {
      throw asStoreError(error, this.path);
    } finally {
      this.searching.close(checkpointed);
      this.release(!checkpointed);
    }
    if (!checkpointed) return;
    try {
      saveDirectoryIndex(
        join(this.metaDir, "index.json"),
        this.path,
        this.files.all(),
        this.writes.touched,
        this.fs,
      );
    } catch {
      // The index only saves the next open some reading: without it, that open reads the files.
    }
  }

  /**
   * What a batch that could not be written throws. Before its frame is in the journal, nothing of it is
   * on disk: memory is put back as the files (and the bytes queued for them) say, sessions the batch
   * created are forgotten, and the batch fails with nothing written. After, or when an fsync failed, the
   * outcome is unknown and the store stops (STORE_FAILED).
   */
  private failedBatch(error: unknown): SessiondError {
    if (isSessiondError(error, "STORE_FAILED")) return error;
    if (this.writes.pending.journaled)
      return new SessiondError(
        "STORE_FAILED",
        `the batch is in the journal but its files could not follow: ${messageOf(error)}`,
        { cause: error },
      );
    try {
      this.reads.rollBack((tracked) => this.groups.discardCreated(tracked));
      this.titles.rollBack();
      this.rewrites.rollBack();
    } catch (again) {
      return new SessiondError(
        "STORE_FAILED",
        `a batch failed (${messageOf(error)}) and the session files could not be read back: ${messageOf(again)}`,
        { cause: again },
      );
    }
    return asStoreError(error, this.path);
  }

  /**
   * Closes every file. The journal is removed only once the files hold all of it; else (`keepJournal`) it
   * stays for the next open to replay. A failure to release one thing does not keep the others.
   */
  private release(keepJournal: boolean): void {
    try {
      this.writes.close(keepJournal);
    } catch {
      // Released as far as it goes: a journal left behind is replayed, and replaying twice changes nothing.
    }
    this.changes.close();
    this.files.closeAll();
    try {
      this.inboxFile?.close();
    } catch {
      // What it holds was written; closing the descriptor changes nothing on disk.
    }
  }

  private guard<T>(run: () => T): T {
    return guarded(this.path, run);
  }
}
