import type { ShareLink } from "./share.js";

/** A `shares` row, as both databases name its columns. */
export interface ShareRow {
  id: string;
  key: string;
  session_id: string;
  head_seq: number;
  title: string;
  created_at: number;
}

export const SHARE_COLUMNS = "id, key, session_id, head_seq, title, created_at";

export function linkOf(row: ShareRow): ShareLink {
  return {
    id: row.id,
    key: row.key,
    sessionId: row.session_id,
    headSeq: Number(row.head_seq),
    title: row.title,
    createdAt: Number(row.created_at),
  };
}

export function rowValues(link: ShareLink): [string, string, string, number, string, number] {
  return [link.id, link.key, link.sessionId, link.headSeq, link.title, link.createdAt];
}
