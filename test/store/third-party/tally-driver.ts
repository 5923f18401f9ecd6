// A third-party driver as its author would write it, importing sessiond only by its package name: it keeps
// sessions in memory by handing every call to sessiond's memory driver, and tallies the batches it
// commits. third-party-driver.test.ts runs the store contract on it through `sessiond/store/testing`.
import type { Entry, Session } from "sessiond";
import {
  type EntryRange,
  type ForeignChanges,
  type GroupOutcome,
  type KeptContext,
  type KeyHead,
  LogStore,
  MemoryDriver,
  type NormalisedQuery,
  type SessionScan,
  type StoreDriver,
  type WriteGroup,
} from "sessiond/store";

export class TallyDriver implements StoreDriver {
  readonly backend = "tally";
  readonly rewritesEntries = true;
  /** Batches and write groups committed so far. */
  batches = 0;
  groups = 0;
  private readonly inner = new MemoryDriver();

  loadKey(key: string): KeyHead {
    return this.inner.loadKey(key);
  }
  generations(key: string): Session[] {
    return this.inner.generations(key);
  }
  sessionById(id: string): Session | undefined {
    return this.inner.sessionById(id);
  }
  findIdempotent(session: Session, keys: readonly string[]): Map<string, Entry> {
    return this.inner.findIdempotent(session, keys);
  }
  readEntries(session: Session, range: EntryRange & { order: "asc" | "desc" }): Entry[] {
    return this.inner.readEntries(session, range);
  }
  loadKept(session: Session): KeptContext {
    return this.inner.loadKept(session);
  }
  forksOf(sessionIds: readonly string[]): Session[] {
    return this.inner.forksOf(sessionIds);
  }
  list(query: NormalisedQuery): Session[] {
    return this.inner.list(query);
  }
  scan(scan: SessionScan & { limit: number }): Session[] {
    return this.inner.scan(scan);
  }
  foreignChanges(): ForeignChanges {
    return this.inner.foreignChanges();
  }
  commit(groups: readonly WriteGroup[]): GroupOutcome[] {
    this.batches++;
    this.groups += groups.length;
    return this.inner.commit(groups);
  }
  sync(): void {
    this.inner.sync();
  }
  close(): void {
    this.inner.close();
  }
}

/** The driver as a `Store`: sessiond's log core plans every write and group-commits it to the driver. */
export const openTallyStore = (driver = new TallyDriver()) => new LogStore(driver, { durability: "relaxed" });
