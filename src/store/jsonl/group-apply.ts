import { join } from "node:path";
import type { Entry } from "../../model/entry.js";
import type { Session } from "../../model/session.js";
import type { Expectation, GroupOutcome, WriteChange, WriteGroup } from "../driver.js";
import { cloneSession } from "../session-log.js";
import { entryLines, metadataLine } from "./crabtalk-format.js";
import { asStoreError } from "./directory-error.js";
import type { Tracked } from "./directory-scan.js";
import type { FileSystem } from "./durable-fs.js";
import type { EntryCache } from "./entry-cache.js";
import type { EntryRewrite } from "./entry-rewrite.js";
import type { FileReads } from "./file-reads.js";
import type { FileWrites } from "./file-writes.js";
import { encodeLine } from "./json-line.js";
import type { SessionFiles } from "./session-files.js";
import type { TitleRewrite } from "./title-rewrite.js";

/** How the JSONL driver applies one write group: to what memory holds of the files, and as bytes queued for them. */
export class GroupApply {
  constructor(
    private readonly path: string,
    private readonly files: SessionFiles,
    private readonly writes: FileWrites,
    private readonly reads: FileReads,
    private readonly cache: EntryCache,
    private readonly titles: TitleRewrite,
    private readonly rewrites: EntryRewrite,
    private readonly fs: FileSystem,
  ) {}

  /**
   * Checks the group's expectations, then does what can fail (create files, read entries a compaction
   * needs, settle files about to go), then applies its changes in memory and queues their bytes.
   */
  applyGroup(group: WriteGroup): GroupOutcome {
    if (!group.expects.every((e) => this.holds(e))) return { ok: false, stale: true };
    const created: Tracked[] = [];
    try {
      for (const change of group.changes) {
        if (change.kind === "createSession") created.push(this.createFile(change.session));
        else if (change.kind === "appendEntries" && change.entries.some((e) => e.type === "compaction")) {
          const tracked = this.files.get(change.session.id);
          if (tracked) this.reads.load(tracked);
        } else if (change.kind === "deleteSession") {
          const tracked = this.files.get(change.session.id);
          if (tracked) this.writes.settleFile(tracked);
        }
      }
    } catch (error) {
      for (const tracked of created) this.discardCreated(tracked);
      return { ok: false, error: asStoreError(error, this.path) };
    }
    for (const change of group.changes) this.apply(change);
    return { ok: true };
  }

  private holds(expectation: Expectation): boolean {
    const current = this.files.current(expectation.key)?.session;
    if (expectation.kind === "session")
      return current?.id === expectation.sessionId && current.entryCount === expectation.lastSeq;
    return current === undefined && this.files.lastGeneration(expectation.key) === expectation.lastGeneration;
  }

  private apply(change: WriteChange): void {
    switch (change.kind) {
      case "createSession":
        return; // Created before the group's other changes (applyGroup).
      case "appendEntries": {
        const tracked = this.files.get(change.session.id)!;
        this.record(tracked, change.entries, cloneSession(change.session));
        return;
      }
      case "updateSession": {
        const tracked = this.files.get(change.session.id)!;
        tracked.session = cloneSession(change.session);
        this.writes.pending.sidecars.set(tracked.session.id, tracked.session);
        return;
      }
      case "moveSessions": {
        const sessions = change.sessions.map(cloneSession);
        this.files.moveKey(change.from, sessions);
        for (const session of sessions) this.writes.pending.sidecars.set(session.id, session);
        return;
      }
      case "rewriteEntries": {
        const tracked = this.files.get(change.session.id);
        if (!tracked) return;
        this.rewrites.rewrite(tracked, change.entries);
        const titleBefore = tracked.session.title;
        tracked.session = cloneSession(change.session);
        this.writes.pending.sidecars.set(tracked.session.id, tracked.session);
        if (tracked.session.title !== titleBefore) this.titles.titled(tracked);
        return;
      }
      case "deleteSession": {
        const tracked = this.files.get(change.session.id);
        if (!tracked) return;
        this.forget(tracked);
        this.writes.pending.removals.push(tracked);
        return;
      }
    }
  }

  /**
   * Queues the entries' lines for the session's file, and adds them to what memory holds of it, if it
   * holds its entries (a compaction's kept messages are written again after its marker, from them).
   */
  private record(tracked: Tracked, fresh: readonly Entry[], session: Session): void {
    const loaded = this.cache.get(tracked.session.id);
    for (const entry of fresh) {
      for (const line of entryLines(entry, loaded?.entries ?? fresh)) {
        this.writes.queue(tracked, line);
        if (loaded) loaded.bytes += line.length;
      }
      if (loaded) this.cache.appended(loaded, entry);
    }
    if (loaded) this.cache.remeasure(tracked.session.id, loaded);
    const titleBefore = tracked.session.title;
    tracked.session = session;
    if (session.title !== titleBefore) this.titles.titled(tracked);
  }

  private createFile(session: Session): Tracked {
    const tracked = this.files.create(cloneSession(session));
    this.writes.pending.created.push(tracked);
    // A fork has no title entry of its own: its line 1 keeps the title it began with.
    this.writes.queue(
      tracked,
      encodeLine(metadataLine(session.forkedFrom ? session : { ...session, title: "" })),
    );
    this.writes.pending.dirChanged = true;
    return tracked;
  }

  discardCreated(tracked: Tracked): void {
    this.forget(tracked);
    this.writes.pending.created = this.writes.pending.created.filter((t) => t !== tracked);
    this.fs.rmSync(join(this.path, tracked.file), { force: true });
  }

  private forget(tracked: Tracked): void {
    this.files.untrack(tracked);
    this.cache.drop(tracked.session.id);
    this.writes.forget(tracked.session.id);
    this.titles.forget(tracked);
    this.rewrites.forget(tracked);
  }
}
