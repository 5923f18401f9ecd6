// A ZeroClaw workspace's sessions/ built field by field from peer-formats.md §3.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { compact, lines } from "./json-styles.js";

// serde_json without preserve_order: the keys of the JSON text inside `content` are sorted.
const toolTurn = (content: string | null, calls: Array<{ id: string; name: string; args: object }>) =>
  compact({
    content,
    tool_calls: calls.map((c) => ({ arguments: compact(c.args), id: c.id, name: c.name })),
  });
const toolResult = (output: string, id: string) => compact({ content: output, tool_call_id: id });

export function writeZeroclaw(root: string): void {
  const dir = join(root, "sessions");
  mkdirSync(dir, { recursive: true });
  const db = new Database(join(dir, "sessions.db"));
  db.pragma("journal_mode = WAL");
  db.exec(`
    CREATE TABLE sessions (id INTEGER PRIMARY KEY AUTOINCREMENT, session_key TEXT NOT NULL, role TEXT NOT NULL, content TEXT NOT NULL, created_at TEXT NOT NULL);
    CREATE INDEX idx_sessions_key ON sessions(session_key);
    CREATE INDEX idx_sessions_key_id ON sessions(session_key, id);
    CREATE TABLE session_metadata (session_key TEXT PRIMARY KEY, created_at TEXT, last_activity TEXT, message_count INTEGER DEFAULT 0, name TEXT, state TEXT NOT NULL DEFAULT 'idle', turn_id TEXT, turn_started_at TEXT, agent_alias TEXT, channel_id TEXT, room_id TEXT, sender_id TEXT);
    CREATE TABLE jsonl_import_receipts (source_name TEXT PRIMARY KEY, session_key TEXT, source_hash TEXT, source_len INTEGER, imported_at TEXT);
    CREATE VIRTUAL TABLE sessions_fts USING fts5(session_key, content, content=sessions, content_rowid=id);
  `);
  const row = db.prepare("INSERT INTO sessions (session_key, role, content, created_at) VALUES (?, ?, ?, ?)");
  const alice = "telegram_12345_alice";
  row.run(
    alice,
    "user",
    "[2026-12-01 09:00:00 +01:00] remind me at 5",
    "2026-12-01T08:00:01.000000000+00:00",
  );
  row.run(
    alice,
    "assistant",
    toolTurn(null, [
      { id: "call_1", name: "reminder", args: { at: "17:00", api_key: "sk-live-123456789012345678901234" } },
    ]),
    "2026-12-01T08:00:02.000000000+00:00",
  );
  row.run(alice, "tool", toolResult("reminder set", "call_1"), "2026-12-01T08:00:03.000000000+00:00");
  row.run(alice, "assistant", "Done: 17:00.", "2026-12-01T08:00:04.000000000+00:00");
  const meta = db.prepare(
    "INSERT INTO session_metadata (session_key, created_at, last_activity, message_count, name, state, agent_alias, channel_id, room_id, sender_id) VALUES (?, ?, ?, ?, ?, 'idle', ?, ?, ?, ?)",
  );
  meta.run(
    alice,
    "2026-12-01T08:00:01+00:00",
    "2026-12-01T08:00:04+00:00",
    4,
    "Reminders",
    null,
    null,
    "12345",
    "alice",
  );
  // A channel with an alias: channel_id is `<channel>.<alias>`.
  const bob = "discord_clamps_d900_bob";
  row.run(bob, "user", "[2026-12-01 10:00:00 +00:00] status?", "2026-12-01T10:00:00+00:00");
  row.run(bob, "assistant", "[No reply sent]", "2026-12-01T10:00:01+00:00");
  row.run(bob, "robot", "beep", "2026-12-01T10:00:02+00:00");
  meta.run(
    bob,
    "2026-12-01T10:00:00+00:00",
    "2026-12-01T10:00:02+00:00",
    3,
    null,
    null,
    "discord.clamps",
    "d900",
    "bob",
  );
  // A metadata row created before any message (set_session_context).
  meta.run("telegram_1_x", "2026-12-01T11:00:00+00:00", null, 0, null, null, null, "1", "x");
  db.prepare("INSERT INTO jsonl_import_receipts VALUES (?, ?, ?, ?, ?)").run(
    "telegram_555_carol.jsonl",
    "telegram_555_carol",
    "0".repeat(64),
    120,
    "2026-12-01T07:00:00+00:00",
  );
  row.run("telegram_555_carol", "user", "[2026-11-30 07:00:00 +00:00] old", "2026-12-01T07:00:00+00:00");
  row.run("telegram_555_carol", "assistant", "imported before", "2026-12-01T07:00:00+00:00");
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.pragma("journal_mode = DELETE");
  db.close();
  // Already migrated into the database: the archived copy, and a stale copy still named .jsonl.
  const carol = lines(compact, [
    { role: "user", content: "[2026-11-30 07:00:00 +00:00] old" },
    { role: "assistant", content: "imported before" },
  ]);
  writeFileSync(join(dir, "telegram_555_carol.jsonl.migrated"), carol);
  writeFileSync(join(dir, "telegram_555_carol.jsonl"), carol);
  // The JSONL backend: exactly {role, content}; a forum topic carries the thread twice in the key.
  const torn = '{"role":"user","content":"torn';
  writeFileSync(
    join(dir, "telegram_-100777_42_42_dave.jsonl"),
    lines(compact, [
      { role: "user", content: "[2026-12-01 12:00:00 +00:00] list files" },
      {
        role: "assistant",
        content: toolTurn(null, [{ id: "call_2", name: "shell", args: { command: "ls" } }]),
      },
      { role: "tool", content: toolResult("a.txt", "call_2") },
      { role: "assistant", content: "One file: a.txt." },
      "   ",
      { role: "user", content: 7 },
      { role: "user", content: "[2026-12-01 12:05:00 +00:00] thanks" },
      { role: "assistant", content: "[Session interrupted — not continuing this request]" },
    ]) + torn,
  );
}
