import type { Entry } from "../model/entry.js";
import { SessiondError } from "../model/errors.js";
import type { Session } from "../model/session.js";
import type { KeptContext } from "./driver.js";
import type { EntryRange } from "./store.js";

export function checkRange(range: EntryRange = {}): Required<Pick<EntryRange, "order">> & EntryRange {
  const { limit, afterSeq, beforeSeq } = range;
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) {
    throw new SessiondError("INVALID_ARGUMENT", "limit must be a positive integer");
  }
  for (const [name, value] of [
    ["afterSeq", afterSeq],
    ["beforeSeq", beforeSeq],
  ] as const) {
    if (value !== undefined && !Number.isInteger(value)) {
      throw new SessiondError("INVALID_ARGUMENT", `${name} must be an integer`);
    }
  }
  return { ...range, order: range.order ?? "asc" };
}

/** A range of a seq-ordered, gap-free entry list (starting at 1, or after a fork's `forkedFrom.seq`). */
export function readRange(entries: readonly Entry[], range?: EntryRange): Entry[] {
  const r = checkRange(range);
  const base = (entries[0]?.seq ?? 1) - 1;
  const from = Math.max(0, (r.afterSeq ?? 0) - base);
  const to = Math.min(entries.length, r.beforeSeq === undefined ? entries.length : r.beforeSeq - 1 - base);
  if (to <= from) return [];
  if (r.order === "asc")
    return entries.slice(from, r.limit === undefined ? to : Math.min(to, from + r.limit));
  return entries.slice(r.limit === undefined ? from : Math.max(from, to - r.limit), to).reverse();
}

/** The kept context of `session` among its entries (seq order): from `contextFromSeq`, and the summary. */
export function keptOf(session: Session, entries: readonly Entry[]): KeptContext {
  const kept: KeptContext = {
    entries: entries.filter((e) => e.seq >= session.contextFromSeq && e.type !== "compaction"),
  };
  const at = session.lastCompactionSeq;
  const summary =
    at === undefined
      ? undefined
      : entries[at - 1 - ((entries[0]?.seq ?? 1) - 1)]?.seq === at
        ? entries[at - 1 - ((entries[0]?.seq ?? 1) - 1)]
        : entries.find((e) => e.seq === at);
  if (summary?.type === "compaction") kept.summary = summary;
  return kept;
}
