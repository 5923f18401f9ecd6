import type { NormalisedQuery } from "../session-query.js";

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
