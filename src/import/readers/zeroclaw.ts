import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { readJsonLines } from "../jsonl-lines.js";
import { messageEntry, timeOf } from "../messages.js";
import type { ImportItem, SourceRead } from "../types.js";
import { chatItems, keyedSession, keyFromStem } from "./chat-lines.js";
import { jsonlNames } from "./crabtalk.js";
import { columnsOf, hasTable, withDatabase } from "./sqlite-rows.js";

/**
 * ZeroClaw: a directory of per-key JSONL files (`sanitize_session_key(key).jsonl`, chat lines), and/or
 * its SQLite `sessions.db` (in the directory, or `memory/sessions.db`, or the file itself): `session_index`
 * (key → active session), `sessions`, `session_messages` (id, session_id, role, content, created_at,
 * meta_json) and `session_state` whose `compaction_after_message_id` marks the compaction boundary; the
 * summary is the first assistant message after it. Keys are `(channel, sender)`: `telegram_alice` → `telegram:alice`.
 */
export function readZeroclaw(path: string, agent: string): SourceRead {
  const read: SourceRead = { sessions: [], problems: [], toolResultsDropped: 0 };
  const isFile = statSync(path).isFile();
  if (!isFile) {
    for (const name of jsonlNames(path)) {
      const file = join(path, name);
      const key = keyFromStem(name.slice(0, -".jsonl".length));
      const { items, toolResults } = chatItems(file, readJsonLines(file, read.problems), read.problems);
      read.toolResultsDropped += toolResults;
      read.sessions.push(keyedSession(key, agent, `zeroclaw:jsonl:${key}`, file, items, false));
    }
  }
  const candidates = isFile ? [path] : [join(path, "sessions.db"), join(path, "memory", "sessions.db")];
  for (const file of candidates) if (existsSync(file)) readDatabase(file, agent, read);
  return read;
}

interface MessageRow {
  id: number;
  session_id: string;
  role: unknown;
  content: unknown;
  created_at: unknown;
  meta_json?: unknown;
}

function readDatabase(file: string, agent: string, read: SourceRead): void {
  withDatabase(file, ["sessions", "session_messages"], "a ZeroClaw sessions.db", read.problems, (db) => {
    const active = new Map<string, string>();
    if (hasTable(db, "session_index")) {
      for (const row of db
        .prepare("SELECT session_key, active_session_id FROM session_index")
        .all() as Array<{
        session_key: string;
        active_session_id: string;
      }>)
        active.set(row.active_session_id, row.session_key);
    }
    const boundary = new Map<string, number>();
    if (hasTable(db, "session_state")) {
      const rows = db
        .prepare("SELECT session_id, value FROM session_state WHERE key = 'compaction_after_message_id'")
        .all() as Array<{ session_id: string; value: unknown }>;
      for (const row of rows) boundary.set(row.session_id, Number(row.value));
    }
    const hasKey = columnsOf(db, "sessions").has("session_key");
    const sessions = db
      .prepare(
        `SELECT id, ${hasKey ? "session_key" : "NULL AS session_key"}, created_at FROM sessions ORDER BY created_at, id`,
      )
      .all() as Array<{ id: string; session_key: string | null; created_at: unknown }>;
    const messages = db.prepare("SELECT * FROM session_messages WHERE session_id = ? ORDER BY id");
    for (const row of sessions) {
      const key = row.session_key ?? active.get(row.id);
      if (!key) {
        read.problems.push({ file, row: `sessions ${row.id}`, reason: "no session key for this session" });
        continue;
      }
      const items: ImportItem[] = [];
      const after = boundary.get(row.id);
      let summaryTaken = after === undefined;
      for (const m of messages.all(row.id) as MessageRow[]) {
        const ts = timeOf(m.created_at);
        if (!summaryTaken && m.id > (after ?? 0) && m.role === "assistant") {
          summaryTaken = true;
          items.push({
            kind: "compaction",
            summary: String(m.content ?? ""),
            ...(ts !== undefined ? { ts } : {}),
          });
          continue;
        }
        if (typeof m.content !== "string") {
          read.problems.push({ file, row: `session_messages ${m.id}`, reason: "content is not text" });
          continue;
        }
        const entry = messageEntry(m.role, m.content, ts !== undefined ? { ts } : {});
        if ("entry" in entry) items.push({ kind: "entry", entry: entry.entry });
        else if ("toolResult" in entry) read.toolResultsDropped++;
        else read.problems.push({ file, row: `session_messages ${m.id}`, reason: entry.error });
      }
      const createdAt = timeOf(row.created_at);
      const isActive = active.size === 0 || active.get(row.id) === key;
      read.sessions.push(
        keyedSession(key, agent, `zeroclaw:db:${row.id}`, file, items, !isActive, createdAt),
      );
    }
  });
}
