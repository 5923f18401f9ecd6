import type { NormalisedQuery } from "../session-query.js";
import type { SessionScan } from "../store.js";

/**
 * A coarse copy of `last_activity_at` (`activity_bucket` = it divided by `ms`, PostgreSQL's sessions) that
 * the activity index holds instead of the exact time, so an append's update leaves every index alone (a
 * HOT update) until the bucket changes. The queries then order by the bucket first (the same order) and
 * bound it where they bound the time.
 */
export interface ActivityBucket {
  ms: number;
}

/** The SELECT for one page of sessions: filters, then the cursor, newest first; one row more than the page. */
export function listSessionsSql(
  q: NormalisedQuery,
  bucket?: ActivityBucket,
): { sql: string; params: unknown[] } {
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
    if (bucket) {
      where.push("activity_bucket >= ?");
      params.push(Math.floor(q.activeSince / bucket.ms));
    }
  }
  if (q.after && q.sort === "created") {
    where.push("id < ?");
    params.push(q.after.id);
  } else if (q.after) {
    where.push("(last_activity_at < ? OR (last_activity_at = ? AND id < ?))");
    params.push(q.after.lastActivityAt, q.after.lastActivityAt, q.after.id);
    if (bucket) {
      where.push("activity_bucket <= ?");
      params.push(Math.floor(q.after.lastActivityAt / bucket.ms));
    }
  }
  const activity = bucket ? "activity_bucket DESC, last_activity_at DESC" : "last_activity_at DESC";
  const order = q.sort === "created" ? "id DESC" : `${activity}, id DESC`;
  const filter = where.length > 0 ? `WHERE ${where.join(" AND ")}` : "";
  params.push(q.limit + 1);
  return { sql: `SELECT * FROM sessions ${filter} ORDER BY ${order} LIMIT ?`, params };
}

/** The SELECT for one scan page: current sessions by last activity, archived ones by archiving time. */
export function scanSessionsSql(
  scan: SessionScan & { limit: number },
  bucket?: ActivityBucket,
): { sql: string; params: unknown[] } {
  const time = scan.state === "active" ? "last_activity_at" : "archived_at";
  const byBucket = scan.state === "active" ? bucket : undefined;
  const where = [`state = '${scan.state}'`];
  const params: unknown[] = [];
  const before = scan.state === "active" ? scan.inactiveBefore : scan.archivedBefore;
  if (before !== undefined) {
    where.push(`${time} < ?`);
    params.push(before);
    if (byBucket) {
      where.push("activity_bucket <= ?");
      params.push(Math.floor(before / byBucket.ms));
    }
  }
  if (scan.keyPrefix !== undefined) {
    // A range on the key, so the prefix needs no LIKE (and no escaping of % or _ in keys).
    where.push("key >= ? AND key < ?");
    params.push(scan.keyPrefix, `${scan.keyPrefix}\u{10FFFF}`);
  }
  if (scan.after) {
    where.push(`(${time} > ? OR (${time} = ? AND id > ?))`);
    params.push(scan.after.time, scan.after.time, scan.after.id);
    if (byBucket) {
      where.push("activity_bucket >= ?");
      params.push(Math.floor(scan.after.time / byBucket.ms));
    }
  }
  params.push(scan.limit);
  const order = byBucket ? `activity_bucket, ${time}, id` : `${time}, id`;
  return { sql: `SELECT * FROM sessions WHERE ${where.join(" AND ")} ORDER BY ${order} LIMIT ?`, params };
}
