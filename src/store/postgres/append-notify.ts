import type { PoolClient } from "pg";
import type { Entry } from "../../model/entry.js";
import type { PgNotifications } from "./notifications.js";

export const APPENDED_CHANNEL = "sessiond_appended";

/** Entries of another process committed to `key`: seqs `fromSeq..toSeq` of its current session. */
export interface ForeignAppend {
  key: string;
  fromSeq: number;
  toSeq: number;
}

/**
 * Tells the other processes, on commit, which keys got entries: one NOTIFY per key of the batch, carrying
 * only the writer's id, the seq range and the key (never content), `<writer> <from> <to> <key>`.
 */
export async function notifyAppended(
  client: PoolClient,
  writer: string,
  fresh: ReadonlyArray<{ key: string; entry: Entry }>,
): Promise<void> {
  const ranges = new Map<string, [number, number]>();
  for (const { key, entry } of fresh) {
    const range = ranges.get(key);
    if (range) range[1] = Math.max(range[1], entry.seq);
    else ranges.set(key, [entry.seq, entry.seq]);
  }
  if (ranges.size === 0) return;
  const payloads = [...ranges].map(([key, [from, to]]) => `${writer} ${from} ${to} ${key}`);
  await client.query(`SELECT pg_notify('${APPENDED_CHANNEL}', p) FROM unnest($1::text[]) AS p`, [payloads]);
}

/** Calls `listener` for each batch another store (process) commits; its own are skipped. */
export function listenForeignAppends(
  notifications: PgNotifications,
  self: string,
  listener: (change: ForeignAppend) => void,
): Promise<() => void> {
  return notifications.listen(APPENDED_CHANNEL, (payload) => {
    const [writer, from, to] = payload.split(" ", 3);
    if (writer === self || from === undefined || to === undefined) return;
    const key = payload.slice(writer!.length + from.length + to.length + 3);
    listener({ key, fromSeq: Number(from), toSeq: Number(to) });
  });
}
