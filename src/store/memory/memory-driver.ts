import type { Entry } from "../../model/entry.js";
import type { Session } from "../../model/session.js";
import { MemorySearchIndex } from "../../search/memory-index.js";
import type {
  ForeignChanges,
  GroupOutcome,
  KeptContext,
  KeyHead,
  StoreDriver,
  WriteChange,
  WriteGroup,
} from "../driver.js";
import { keptOf, readRange } from "../entry-range.js";
import { frozenCopy } from "../frozen.js";
import { cloneSession } from "../session-log.js";
import { forksAmong, type NormalisedQuery, pageOf, sweepOf } from "../session-query.js";
import type { EntryRange, SessionScan } from "../store.js";
import { MemoryDriverInbox } from "./driver-inbox.js";

interface Generation {
  session: Session;
  /** Frozen copies: what a caller does with the entries it was given changes nothing stored. */
  entries: Readonly<Entry>[];
  byIdempotencyKey: Map<string, Readonly<Entry>>;
}

const NOTHING_FOREIGN: ForeignChanges = { kind: "none" };

/** Sessions in this process's memory. The core is its only writer, so expectations always hold. */
export class MemoryDriver implements StoreDriver {
  readonly backend = "memory";
  readonly rewritesEntries = true;
  readonly inbox = new MemoryDriverInbox();
  private readonly byId = new Map<string, Generation>();
  private readonly byKey = new Map<string, Generation[]>();
  /** Search, updated with each change it applies. */
  private index: MemorySearchIndex | undefined;

  /** Built on the first search, from every entry held; kept up to date from then on. */
  get searchIndex(): MemorySearchIndex {
    if (!this.index) {
      this.index = new MemorySearchIndex((id) => this.byId.get(id)?.session);
      for (const generation of this.byId.values()) this.index.add(generation.entries);
    }
    return this.index;
  }

  loadKey(key: string): KeyHead {
    let lastGeneration = 0;
    let current: Session | undefined;
    for (const g of this.byKey.get(key) ?? []) {
      lastGeneration = Math.max(lastGeneration, g.session.generation);
      if (g.session.state === "active") current = cloneSession(g.session);
    }
    return current ? { current, lastGeneration } : { lastGeneration };
  }

  generations(key: string): Session[] {
    return (this.byKey.get(key) ?? [])
      .map((g) => cloneSession(g.session))
      .sort((a, b) => b.generation - a.generation);
  }

  sessionById(id: string): Session | undefined {
    const generation = this.byId.get(id);
    return generation && cloneSession(generation.session);
  }

  findIdempotent(session: Session, keys: readonly string[]): Map<string, Entry> {
    const found = new Map<string, Entry>();
    const generation = this.byId.get(session.id);
    for (const key of keys) {
      const entry = generation?.byIdempotencyKey.get(key);
      if (entry) found.set(key, entry as Entry);
    }
    return found;
  }

  readEntries(session: Session, range: EntryRange): Entry[] {
    return readRange((this.byId.get(session.id)?.entries ?? []) as Entry[], range);
  }

  loadKept(session: Session): KeptContext {
    // Entries are kept as frozen copies (appendEntries).
    return { ...keptOf(session, (this.byId.get(session.id)?.entries ?? []) as Entry[]), frozen: true };
  }

  forksOf(sessionIds: readonly string[]): Session[] {
    return forksAmong(this.sessions(), sessionIds);
  }

  list(query: NormalisedQuery): Session[] {
    return pageOf(query, this.sessions());
  }

  scan(scan: SessionScan & { limit: number }): Session[] {
    return sweepOf(scan, this.sessions());
  }

  private *sessions(): Generator<Session> {
    for (const g of this.byId.values()) yield g.session;
  }

  foreignChanges(): ForeignChanges {
    return NOTHING_FOREIGN;
  }

  commit(groups: readonly WriteGroup[]): GroupOutcome[] {
    return groups.map((group) => {
      for (const change of group.changes) this.apply(change);
      if (group.inbox) for (const write of group.inbox) this.inbox.apply(write);
      return { ok: true };
    });
  }

  sync(): void {}

  close(): void {}

  private apply(change: WriteChange): void {
    switch (change.kind) {
      case "createSession": {
        const generation: Generation = {
          session: cloneSession(change.session),
          entries: [],
          byIdempotencyKey: new Map(),
        };
        this.byId.set(change.session.id, generation);
        const list = this.byKey.get(change.session.key) ?? [];
        list.push(generation);
        this.byKey.set(change.session.key, list);
        return;
      }
      case "appendEntries": {
        const generation = this.byId.get(change.session.id)!;
        for (const fresh of change.entries) {
          const entry = frozenCopy(fresh).value;
          generation.entries.push(entry);
          if (entry.idempotencyKey !== undefined)
            generation.byIdempotencyKey.set(entry.idempotencyKey, entry);
        }
        this.index?.add(change.entries);
        generation.session = {
          ...cloneSession(change.session),
          key: generation.session.key,
          generation: generation.session.generation,
        };
        return;
      }
      case "updateSession": {
        const generation = this.byId.get(change.session.id)!;
        generation.session = cloneSession(change.session);
        return;
      }
      case "moveSessions": {
        this.byKey.delete(change.from);
        const moved: Generation[] = [];
        for (const session of change.sessions) {
          const generation = this.byId.get(session.id)!;
          generation.session = cloneSession(session);
          moved.push(generation);
        }
        this.byKey.set(change.sessions[0]?.key ?? change.from, moved);
        return;
      }
      case "rewriteEntries": {
        const generation = this.byId.get(change.session.id)!;
        const first = generation.entries[0]?.seq ?? 1;
        for (const fresh of change.entries) {
          const entry = frozenCopy(fresh).value;
          generation.entries[entry.seq - first] = entry;
          if (entry.idempotencyKey !== undefined)
            generation.byIdempotencyKey.set(entry.idempotencyKey, entry);
        }
        generation.session = { ...generation.session, title: change.session.title };
        if (this.index) {
          this.index.remove(change.session.id);
          this.index.add(generation.entries);
        }
        return;
      }
      case "deleteSession": {
        const generation = this.byId.get(change.session.id);
        if (!generation) return;
        this.byId.delete(change.session.id);
        this.index?.remove(change.session.id);
        const key = generation.session.key;
        const rest = (this.byKey.get(key) ?? []).filter((g) => g !== generation);
        if (rest.length > 0) this.byKey.set(key, rest);
        else this.byKey.delete(key);
        return;
      }
    }
  }
}
