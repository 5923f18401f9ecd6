import { LRUCache } from "lru-cache";
import { capabilitiesOf, type Store } from "../store/store.js";
import type { SessionEvents } from "./events.js";

/** Entries another process committed to `key` (seqs of its current session); ids only. */
export interface ForeignAppendNotice {
  key: string;
  fromSeq: number;
  toSeq: number;
}

/** A store shared with other processes that tells of their appends (PostgreSQL). */
export interface ForeignAppendSource {
  onForeignAppend(listener: (change: ForeignAppendNotice) => void): Promise<() => void>;
}

function isSource(store: Store): store is Store & ForeignAppendSource {
  return capabilitiesOf(store).foreignAppends === true;
}

/** Keys whose last relayed seq is remembered; an older one is read from the notice's first seq. */
const REMEMBERED_KEYS = 10_000;

/**
 * Makes another process's appends `appended` events here, so this process's WebSocket subscribers and
 * dashboard see turns run elsewhere. The notice carries only the key and seqs; the entries are read from
 * the store after the last seq relayed for that key (one read at a time per key, in order), and only
 * while someone listens who wants them (not only `localOnly` listeners: events.ts).
 */
export function relayForeignAppends(store: Store, events: SessionEvents): void {
  if (!isSource(store)) return;
  const lastSeen = new LRUCache<string, number>({ max: REMEMBERED_KEYS });
  const reading = new Map<string, Promise<void>>();
  const relay = async ({ key, fromSeq, toSeq }: ForeignAppendNotice) => {
    const after = Math.max(lastSeen.get(key) ?? fromSeq - 1, fromSeq - 1);
    if (after >= toSeq) return;
    const session = await store.getSession(key);
    if (!session) return;
    const entries = await store.readEntries(session.id, { afterSeq: after, beforeSeq: toSeq + 1 });
    if (entries.length === 0) return;
    lastSeen.set(key, entries.at(-1)!.seq);
    events.emit({ type: "appended", key, session, entries }, true);
  };
  store
    .onForeignAppend((notice) => {
      if (events.foreignListenerCount === 0) return;
      const previous = reading.get(notice.key) ?? Promise.resolve();
      const next = previous.then(() => relay(notice)).catch(() => {});
      reading.set(notice.key, next);
      void next.finally(() => {
        if (reading.get(notice.key) === next) reading.delete(notice.key);
      });
    })
    .catch(() => {
      // The server is unreachable at start: live events from other processes start with its return.
    });
}
