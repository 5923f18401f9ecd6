import type { ImportItem } from "./types.js";

function timeOfItem(item: ImportItem): number | undefined {
  return item.kind === "compaction" ? item.ts : item.entry.ts;
}

function setTime(item: ImportItem, ts: number): void {
  if (item.kind === "compaction") item.ts = ts;
  else item.entry.ts = ts;
}

/** A summary or a title: written by the peer at a time of its own, apart from the messages around it. */
function isMovable(item: ImportItem): boolean {
  if (timeOfItem(item) === undefined) return false;
  return item.kind === "compaction" || item.entry.type === "title";
}

/**
 * A source session's items in the order of the peer's own times, monotonic. Messages keep their order;
 * a summary or a title the peer wrote later than the messages after it moves to where its time falls
 * (a summary only ever later, and it keeps the same messages in the context: the first one after its old
 * place). Then a time that goes back (a peer's clock, a local offset, an inferred time) is raised to the
 * one before it, and an item with none takes the one before it (the first one, at the start).
 */
export function placeByTime(source: readonly ImportItem[]): ImportItem[] {
  const items = source.map((item) =>
    item.kind === "compaction" ? { ...item } : { ...item, entry: { ...item.entry } },
  );
  // keepFrom by reference, so that moving items does not change what a summary keeps.
  const keeps = new Map<ImportItem, ImportItem | undefined>();
  items.forEach((item, i) => {
    if (item.kind !== "compaction") return;
    keeps.set(item, item.keepFrom !== undefined && item.keepFrom < i ? items[item.keepFrom] : items[i + 1]);
  });
  const fixed: ImportItem[] = [];
  const moved: Array<{ item: ImportItem; after: number }> = [];
  for (const item of items) {
    if (!isMovable(item)) {
      fixed.push(item);
      continue;
    }
    const ts = timeOfItem(item) as number;
    let after = fixed.length;
    // A title may move back to its time; a summary stays after what it summarises.
    if (item.kind !== "compaction")
      while (after > 0 && (timeOfItem(fixed[after - 1] as ImportItem) ?? ts) > ts) after--;
    moved.push({ item, after });
  }
  // Forward: past the fixed items the peer wrote before it.
  for (const m of moved) {
    const ts = timeOfItem(m.item) as number;
    while (m.after < fixed.length && (timeOfItem(fixed[m.after] as ImportItem) ?? ts + 1) <= ts) m.after++;
  }
  moved.sort((a, b) => a.after - b.after);
  const out: ImportItem[] = [];
  let next = 0;
  fixed.forEach((item, i) => {
    while (next < moved.length && (moved[next] as { after: number }).after <= i)
      out.push((moved[next++] as { item: ImportItem }).item);
    out.push(item);
  });
  while (next < moved.length) out.push((moved[next++] as { item: ImportItem }).item);
  let last: number | undefined;
  for (const item of out) {
    const ts = timeOfItem(item);
    if (ts === undefined || (last !== undefined && ts < last)) {
      if (last !== undefined) setTime(item, last);
    } else last = ts;
  }
  // Items before the first time (a name the peer keeps without one) take that first time.
  const first = out.map(timeOfItem).find((ts) => ts !== undefined);
  if (first !== undefined)
    for (const item of out) {
      if (timeOfItem(item) !== undefined) break;
      setTime(item, first);
    }
  out.forEach((item, i) => {
    if (item.kind !== "compaction") return;
    const keep = keeps.get(item);
    const at = keep ? out.indexOf(keep) : -1;
    if (at >= 0 && at < i) item.keepFrom = at;
    else delete item.keepFrom;
  });
  return out;
}
