import type { Entry } from "../../model/entry.js";
import type { WriteGroup } from "../driver.js";
import type { PgNotifications } from "./notifications.js";

/** Entries appended to a key's current session (for live views: foreign-events.ts). */
export const APPENDED_CHANNEL = "sessiond_appended";
/** Every key a commit changed (for the other processes' caches: foreign-keys.ts). */
export const CHANGED_CHANNEL = "sessiond_changed";

/** One NOTIFY, sent when the transaction that queued it commits. */
export interface Notice {
  channel: string;
  payload: string;
}

/** Entries of another process committed to `key`: seqs `fromSeq..toSeq` of its current session. */
export interface ForeignAppend {
  key: string;
  fromSeq: number;
  toSeq: number;
}

/** NOTIFY payloads must stay under 8,000 bytes: a batch's changes go in as few as fit. */
const MAX_PAYLOAD = 7900;

/**
 * The NOTIFYs telling the other processes, on commit, which keys got entries, as few as fit: the writer's id
 * on the first line, then one `<from> <to> <key>` line per key (ids and seqs only, never content).
 */
export function appendedNotices(
  writer: string,
  fresh: ReadonlyArray<{ key: string; entry: Entry }>,
): string[] {
  const ranges = new Map<string, [number, number]>();
  for (const { key, entry } of fresh) {
    const range = ranges.get(key);
    if (range) range[1] = Math.max(range[1], entry.seq);
    else ranges.set(key, [entry.seq, entry.seq]);
  }
  if (ranges.size === 0) return [];
  const payloads: string[] = [];
  let payload = writer;
  for (const [key, [from, to]] of ranges) {
    const line = `\n${from} ${to} ${key}`;
    if (Buffer.byteLength(payload) + Buffer.byteLength(line) > MAX_PAYLOAD) {
      payloads.push(payload);
      payload = writer;
    }
    payload += line;
  }
  payloads.push(payload);
  return payloads;
}

/**
 * The NOTIFYs of a batch's committed groups: on CHANGED_CHANNEL the writer's id, then every key changed
 * (JSON, one a line); on APPENDED_CHANNEL the appends to current sessions (`appendedNotices`).
 */
export function batchNotices(writer: string, groups: readonly WriteGroup[]): Notice[] {
  const changed = new Set<string>();
  const fresh: Array<{ key: string; entry: Entry }> = [];
  for (const { changes } of groups) {
    for (const change of changes) {
      if (change.kind === "moveSessions") {
        changed.add(change.from);
        for (const s of change.sessions) changed.add(s.key);
        continue;
      }
      changed.add(change.session.key);
      if (change.kind === "appendEntries" && change.session.state === "active")
        for (const entry of change.entries) fresh.push({ key: change.session.key, entry });
    }
  }
  if (changed.size === 0) return [];
  const notices: Notice[] = [];
  let payload = writer;
  for (const key of changed) {
    const line = `\n${JSON.stringify(key)}`;
    if (Buffer.byteLength(payload) + Buffer.byteLength(line) > MAX_PAYLOAD) {
      notices.push({ channel: CHANGED_CHANNEL, payload });
      payload = writer;
    }
    payload += line;
  }
  notices.push({ channel: CHANGED_CHANNEL, payload });
  for (const p of appendedNotices(writer, fresh)) notices.push({ channel: APPENDED_CHANNEL, payload: p });
  return notices;
}

/** Calls `listener` for each batch another store (process) commits; its own are skipped. */
export function listenForeignAppends(
  notifications: PgNotifications,
  self: string,
  listener: (change: ForeignAppend) => void,
): Promise<() => void> {
  return notifications.listen(APPENDED_CHANNEL, (payload) => {
    const [writer, ...lines] = payload.split("\n");
    if (writer === self) return;
    for (const line of lines) {
      const [from, to] = line.split(" ", 2);
      if (from === undefined || to === undefined) continue;
      listener({ key: line.slice(from.length + to.length + 2), fromSeq: Number(from), toSeq: Number(to) });
    }
  });
}
