import type { Entry } from "../../model/entry.js";
import type { Session } from "../../model/session.js";
import type {
  DriverInbox,
  ForeignChanges,
  GroupOutcome,
  KeptContext,
  KeyHead,
  MaybePromise,
  StoreDriver,
  WriteChange,
  WriteGroup,
} from "../driver.js";
import { freezeInPlace } from "../frozen.js";
import { all, chain } from "../maybe-promise.js";
import type { NormalisedQuery } from "../session-query.js";
import type { EntryRange, SessionScan } from "../store.js";
import type { DataKeys, KeyedSession, SessionKey } from "./data-keys.js";
import { openEntry, openTitle, sealEntry, sealTitle } from "./sealed-entries.js";
import { SealedInbox, sealInboxWrite } from "./sealed-inbox.js";

/** A sealed body that did not open: reported once per session (the entry itself reads as an error note). */
export interface UnreadableEntry {
  sessionId: string;
  seq: number;
  reason: string;
}

export interface SealingOptions {
  keys: DataKeys;
  /** Called the first time a session shows an entry that does not open (default: a process warning). */
  onUnreadable?: (problem: UnreadableEntry) => void;
  /** The inbox rows' key (derived from the configured key), when the driver keeps an inbox. */
  inboxKey?: Buffer;
}

/**
 * Encryption at rest around any driver: entry bodies and titles are sealed with the session's data key
 * (AES-256-GCM) on their way in and opened on their way out, so the log core, its caches and Lineage see
 * plaintext and the driver stores only envelopes. A session's data key, wrapped by the configured key,
 * lives in its row (`dataKey`) and never leaves this wrapper: deleting the row destroys it.
 */
export class SealingDriver implements StoreDriver {
  readonly backend: string;
  readonly remoteReads?: boolean;
  readonly inbox?: DriverInbox;
  readonly concurrentCommits?: number;
  readonly durableBarrier?: () => Promise<void>;
  readonly syncNow?: () => void;
  readonly hold?: (keys: readonly string[]) => Promise<() => void>;
  readonly flush?: () => MaybePromise<void>;
  readonly forksOf?: (sessionIds: readonly string[]) => MaybePromise<Session[]>;
  readonly rewritesEntries?: boolean;
  private readonly keys: DataKeys;
  private readonly inboxKey: Buffer | undefined;
  private readonly reported = new Set<string>();
  private readonly onUnreadable: (problem: UnreadableEntry) => void;

  constructor(
    readonly inner: StoreDriver,
    options: SealingOptions,
  ) {
    this.keys = options.keys;
    this.inboxKey = inner.inbox ? options.inboxKey : undefined;
    this.onUnreadable =
      options.onUnreadable ??
      ((p) =>
        process.emitWarning(`session ${p.sessionId} entry ${p.seq}: ${p.reason}`, {
          code: "SESSIOND_ENTRY_UNREADABLE",
        }));
    this.backend = inner.backend;
    if (inner.remoteReads !== undefined) this.remoteReads = inner.remoteReads;
    if (inner.concurrentCommits !== undefined) this.concurrentCommits = inner.concurrentCommits;
    if (inner.inbox)
      this.inbox = options.inboxKey ? new SealedInbox(inner.inbox, options.inboxKey) : inner.inbox;
    if (inner.durableBarrier) this.durableBarrier = () => inner.durableBarrier!();
    if (inner.syncNow) this.syncNow = () => inner.syncNow!();
    if (inner.hold) this.hold = (keys) => inner.hold!(keys);
    if (inner.flush) this.flush = () => inner.flush!();
    if (inner.rewritesEntries) this.rewritesEntries = true;
    if (inner.forksOf)
      this.forksOf = (ids) => chain(inner.forksOf!(ids), (sessions) => sessions.map((s) => this.opened(s)));
  }

  // ——— reads ———

  loadKey(key: string): MaybePromise<KeyHead> {
    return chain(this.inner.loadKey(key), (head) => {
      if (head.current) head.current = this.opened(head.current);
      return head;
    });
  }

  generations(key: string): MaybePromise<Session[]> {
    return chain(this.inner.generations(key), (sessions) => sessions.map((s) => this.opened(s)));
  }

  sessionById(id: string): MaybePromise<Session | undefined> {
    return chain(this.inner.sessionById(id), (s) => s && this.opened(s));
  }

  list(query: NormalisedQuery): MaybePromise<Session[]> {
    return chain(this.inner.list(query), (sessions) => sessions.map((s) => this.opened(s)));
  }

  scan(scan: SessionScan & { limit: number }): MaybePromise<Session[]> {
    return chain(this.inner.scan(scan), (sessions) => sessions.map((s) => this.opened(s)));
  }

  foreignChanges(): MaybePromise<ForeignChanges> {
    return this.inner.foreignChanges();
  }

  findIdempotent(session: Session, keys: readonly string[]): MaybePromise<Map<string, Entry>> {
    return chain(this.inner.findIdempotent(session, keys), (found) =>
      chain(this.keyOf(session.id), (key) => {
        for (const [k, entry] of found) found.set(k, this.openOne(key, entry, session.id));
        return found;
      }),
    );
  }

  readEntries(session: Session, range: EntryRange & { order: "asc" | "desc" }): MaybePromise<Entry[]> {
    return chain(this.inner.readEntries(session, range), (entries) =>
      entries.length === 0
        ? entries
        : chain(this.keyOf(session.id), (key) => entries.map((e) => this.openOne(key, e, session.id))),
    );
  }

  loadKept(session: Session): MaybePromise<KeptContext> {
    return chain(this.inner.loadKept(session), (kept) =>
      chain(this.keyOf(session.id), (key) => {
        // Built here and held by nothing else: frozen in place, as the core's cache wants them.
        const opened: KeptContext = {
          entries: kept.entries.map((e) => freezeInPlace(this.openOne(key, e, session.id)) as Entry),
          frozen: true,
        };
        if (kept.summary) {
          const summary = freezeInPlace(this.openOne(key, kept.summary, session.id));
          if (summary.type === "compaction") opened.summary = summary;
        }
        return opened;
      }),
    );
  }

  // ——— writes ———

  commit(groups: readonly WriteGroup[], durable: boolean): MaybePromise<GroupOutcome[]> {
    // Every key this batch seals with, looked up first and held here: the cache may evict meanwhile.
    const keys = new Map<string, SessionKey | undefined>();
    const lookups: Array<MaybePromise<unknown>> = [];
    for (const group of groups)
      for (const change of group.changes) {
        if (change.kind === "createSession") continue;
        for (const session of sessionsOf(change))
          if (!keys.has(session.id)) {
            keys.set(session.id, undefined);
            lookups.push(chain(this.keyOf(session.id), (key) => void keys.set(session.id, key)));
          }
      }
    return chain(all(lookups), () => {
      const sealed = groups.map((group) => this.sealedGroup(group, keys));
      return chain(this.inner.commit(sealed, durable), (outcomes) => {
        groups.forEach((group, i) => {
          if (!outcomes[i]?.ok) return;
          for (const change of group.changes)
            if (change.kind === "deleteSession") this.keys.forget(change.session.id);
        });
        return outcomes;
      });
    });
  }

  sync(): MaybePromise<void> {
    return this.inner.sync();
  }

  close(failed: boolean): MaybePromise<void> {
    return this.inner.close(failed);
  }

  private sealedGroup(group: WriteGroup, keys: Map<string, SessionKey | undefined>): WriteGroup {
    const sealed: WriteGroup = { ...group, changes: group.changes.map((c) => this.sealedChange(c, keys)) };
    if (group.inbox && this.inboxKey) {
      const key = this.inboxKey;
      sealed.inbox = group.inbox.map((write) => sealInboxWrite(key, write));
    }
    return sealed;
  }

  /**
   * The change as the driver stores it: every session with its title sealed and its wrapped key on (a
   * driver that keeps sessions in memory keeps it too). A session stored before encryption was on has no
   * key: its title and entries stay as they were (the next generation of its key gets one).
   */
  private sealedChange(change: WriteChange, keys: Map<string, SessionKey | undefined>): WriteChange {
    const stored = (s: Session): KeyedSession => {
      const found = keys.get(s.id);
      return found ? { ...s, title: sealTitle(found.key, s.id, s.title), dataKey: found.wrapped } : s;
    };
    switch (change.kind) {
      case "createSession":
        keys.set(change.session.id, this.keys.create(change.session.id));
        return { kind: "createSession", session: stored(change.session) };
      case "moveSessions":
        return { ...change, sessions: change.sessions.map(stored) };
      case "deleteSession":
        return change;
      default: {
        // appendEntries, updateSession, and kinds this wrapper does not name: they pass through with their
        // session's title and any entries they carry sealed.
        const carried = change as WriteChange & { session?: Session; entries?: Entry[] };
        const sealed: Record<string, unknown> = { ...carried };
        if (carried.session) sealed.session = stored(carried.session);
        const found = carried.session && keys.get(carried.session.id);
        if (found && Array.isArray(carried.entries))
          sealed.entries = carried.entries.map((e) => sealEntry(found.key, e));
        return sealed as unknown as WriteChange;
      }
    }
  }

  /** A session read from the driver: its data key remembered and taken off, its title opened. */
  private opened(session: Session): Session {
    const keyed = session as KeyedSession;
    const found = this.keys.fromRow(keyed);
    delete keyed.dataKey;
    keyed.title = openTitle(found?.key, keyed.id, keyed.title);
    return keyed;
  }

  /** The data key of a session by id: cached, or read from its row. */
  private keyOf(sessionId: string): MaybePromise<SessionKey | undefined> {
    const held = this.keys.cached(sessionId);
    if (held) return held;
    return chain(this.inner.sessionById(sessionId), (row) => (row ? this.keys.fromRow(row) : undefined));
  }

  private openOne(found: SessionKey | undefined, entry: Entry, sessionId: string): Entry {
    const { entry: opened, damaged } = openEntry(found?.key, entry, sessionId);
    if (damaged && !this.reported.has(sessionId)) {
      if (this.reported.size >= 10_000) this.reported.clear();
      this.reported.add(sessionId);
      this.onUnreadable({
        sessionId,
        seq: entry.seq,
        reason: opened.type === "note" ? opened.text : "unreadable",
      });
    }
    return opened;
  }
}

function sessionsOf(change: WriteChange): Session[] {
  if (change.kind === "moveSessions") return change.sessions;
  const carried = change as { session?: Session };
  return carried.session ? [carried.session] : [];
}
