import type { Entry } from "../model/entry.js";
import type { Session } from "../model/session.js";
import type { KeptContext, MaybePromise, StoreDriver } from "./driver.js";
import { chain } from "./maybe-promise.js";
import type { EntryRange } from "./store.js";

type OrderedRange = EntryRange & { order: "asc" | "desc" };

/**
 * A session's history across its lineage: a fork (or a rewound generation) stores only its own entries,
 * numbered after `forkedFrom.seq`; the entries before are its origin's, read through it (and its origin's
 * origin, and so on). Drivers store and read one session's own entries; this joins them. Entries read
 * through an origin are copies carrying the reader's `sessionId`: they are part of its history (their `id`
 * stays the stored entry's).
 */
export class Lineage {
  constructor(private readonly driver: StoreDriver) {}

  readEntries(session: Session, range: OrderedRange): MaybePromise<Entry[]> {
    const origin = session.forkedFrom;
    if (!origin) return this.driver.readEntries(session, range);
    const after = range.afterSeq ?? 0;
    const before = range.beforeSeq ?? Number.POSITIVE_INFINITY;
    const ownWanted = Math.max(after, origin.seq) + 1 < before && session.entryCount > origin.seq;
    const inheritedWanted = after < origin.seq && after + 1 < before;
    const own = (limit: number | undefined): MaybePromise<Entry[]> =>
      !ownWanted || limit === 0
        ? []
        : this.driver.readEntries(session, {
            ...withLimit(range, limit),
            afterSeq: Math.max(after, origin.seq),
          });
    const inherited = (limit: number | undefined): MaybePromise<Entry[]> =>
      !inheritedWanted || limit === 0
        ? []
        : chain(this.driver.sessionById(origin.sessionId), (parent) =>
            parent
              ? chain(
                  this.readEntries(parent, {
                    ...withLimit(range, limit),
                    beforeSeq: Math.min(before, origin.seq + 1),
                  }),
                  (entries) => restamped(entries, session.id),
                )
              : [],
          );
    const [first, second] = range.order === "asc" ? [inherited, own] : [own, inherited];
    return chain(first(range.limit), (head) =>
      chain(second(range.limit === undefined ? undefined : range.limit - head.length), (tail) =>
        head.length === 0 ? tail : tail.length === 0 ? head : head.concat(tail),
      ),
    );
  }

  /** The kept context: the driver's own where it lies in the session's own entries, else joined. */
  loadKept(session: Session): MaybePromise<KeptContext> {
    const origin = session.forkedFrom;
    if (!origin || session.contextFromSeq > origin.seq) return this.driver.loadKept(session);
    const from = session.contextFromSeq;
    return chain(this.readEntries(session, { afterSeq: from - 1, order: "asc" }), (entries) => {
      const kept: KeptContext = { entries: entries.filter((e) => e.type !== "compaction") };
      const at = session.lastCompactionSeq;
      if (at === undefined) return kept;
      return chain(
        this.readEntries(session, { afterSeq: at - 1, beforeSeq: at + 1, order: "asc" }),
        (found) => {
          const summary = found[0];
          if (summary?.type === "compaction") kept.summary = summary;
          return kept;
        },
      );
    });
  }

  /** Idempotency keys answer across the lineage: an origin's entry counts where the fork inherits it. */
  findIdempotent(session: Session, keys: readonly string[]): MaybePromise<Map<string, Entry>> {
    const origin = session.forkedFrom;
    if (!origin) return this.driver.findIdempotent(session, keys);
    return chain(this.driver.findIdempotent(session, keys), (found) => {
      const missing = keys.filter((key) => !found.has(key));
      if (missing.length === 0) return found;
      return chain(this.driver.sessionById(origin.sessionId), (parent) =>
        parent
          ? chain(this.findIdempotent(parent, missing), (inherited) => {
              for (const [key, entry] of inherited)
                if (entry.seq <= origin.seq) found.set(key, { ...entry, sessionId: session.id });
              return found;
            })
          : found,
      );
    });
  }
}

function restamped(entries: Entry[], sessionId: string): Entry[] {
  return entries.map((entry) => (entry.sessionId === sessionId ? entry : { ...entry, sessionId }));
}

function withLimit(range: OrderedRange, limit: number | undefined): OrderedRange {
  const { limit: _limit, ...rest } = range;
  return limit === undefined ? rest : { ...rest, limit };
}
