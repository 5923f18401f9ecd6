import type { NormalisedQuery } from "../session-query.js";
import type { SessionScan } from "../store.js";

/** The SELECT for one page of sessions: filters, then the cursor, newest first; one row more than the page. */
export function listSessionsSql(q: NormalisedQuery): { sql: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  if (!q.includeArchived) where.push("state = 'active'");
  if (q.agent !== undefined) {
    where.push("agent = ?");
    params.push(q.agent);
  }
  if (q.channel !== undefined) {
    where.push("channel = ?");
    params.push(q.channel);
  }
  if (q.activeSince !== undefined) {
    where.push("last_activity_at >= ?");
    params.push(q.activeSince);
  }
  if (q.after && q.sort === "created") {
    where.push("id < ?");
    params.push(q.after.id);
  } else if (q.after) {
    where.push("(last_activity_at < ? OR (last_activity_at = ? AND id < ?))");
    params.push(q.after.lastActivityAt, q.after.lastActivityAt, q.after.id);
  }
  const order = q.sort === "created" ? "id DESC" : "last_activity_at DESC, id DESC";
  const filter = where.length > 0 ? `WHERE ${where.join(" AND ")}` : "";
  params.push(q.limit + 1);
  return { sql: `SELECT * FROM sessions ${filter} ORDER BY ${order} LIMIT ?`, params };
}

/** The SELECT for one scan page: current sessions by last activity, archived ones by archiving time. */
export function scanSessionsSql(scan: SessionScan & { limit: number }): { sql: string; params: unknown[] } {
  const time = scan.state === "active" ? "last_activity_at" : "archived_at";
  const where = [`state = '${scan.state}'`];
  const params: unknown[] = [];
  const before = scan.state === "active" ? scan.inactiveBefore : scan.archivedBefore;
  if (before !== undefined) {
    where.push(`${time} < ?`);
    params.push(before);
  }
  if (scan.keyPrefix !== undefined) {
    // A range on the key, so the prefix needs no LIKE (and no escaping of % or _ in keys).
    where.push("key >= ? AND key < ?");
    params.push(scan.keyPrefix, `${scan.keyPrefix}\u{10FFFF}`);
  }
  if (scan.after) {
    where.push(`(${time} > ? OR (${time} = ? AND id > ?))`);
    params.push(scan.after.time, scan.after.time, scan.after.id);
  }
  params.push(scan.limit);
  return { sql: `SELECT * FROM sessions WHERE ${where.join(" AND ")} ORDER BY ${time}, id LIMIT ?`, params };
}
