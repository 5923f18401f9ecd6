// Session files of other gateways, written by hand from their documented formats (behaviours.md §1–§2,
// the seeds, and each system's docs as src/import/readers describe them), not copied from the projects.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";

export const line = (value: object) => `${JSON.stringify(value)}\n`;

export function writeCrabtalk(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const meta = (title: string, at: string) =>
    line({ agent: "crab", created_by: "TG:user-123", created_at: at, title, uptime_secs: 3 });
  writeFileSync(
    join(dir, "crab_tg-user-123_1.jsonl"),
    meta("", "2026-03-01T10:00:00Z") +
      line({ role: "user", content: "hello" }) +
      line({ role: "assistant", content: "hi there" }),
  );
  writeFileSync(
    join(dir, "crab_tg-user-123_2_lisbon-trip.jsonl"),
    meta("Lisbon trip", "2026-03-02T10:00:00Z") +
      line({ role: "user", content: "plan a trip" }) +
      line({ role: "assistant", content: "where to?" }) +
      line({ compact: "The user plans a trip; destination asked." }) +
      line({ role: "user", content: "Lisbon" }) +
      "{not json\n" +
      line({ role: "assistant", content: "Lisbon it is" }) +
      '{"role":"user","content":"and then',
  );
}

export function writeZeroclaw(dir: string): void {
  mkdirSync(join(dir, "memory"), { recursive: true });
  writeFileSync(
    join(dir, "telegram_alice.jsonl"),
    line({ role: "user", content: "remind me at 5" }) +
      line({
        role: "assistant",
        content: "",
        tool_calls: [
          {
            id: "c1",
            type: "function",
            function: {
              name: "reminder",
              arguments: '{"at":"17:00","api_key":"sk-live-123456789012345678901234"}',
            },
          },
        ],
      }) +
      line({ role: "tool", content: "ok", tool_call_id: "c1" }) +
      line({ role: "assistant", content: "Done: 17:00." }),
  );
  const db = new Database(join(dir, "memory", "sessions.db"));
  db.exec(`
    CREATE TABLE session_index (session_key TEXT PRIMARY KEY, active_session_id TEXT NOT NULL);
    CREATE TABLE sessions (id TEXT PRIMARY KEY, session_key TEXT NOT NULL, status TEXT, title TEXT, created_at TEXT, updated_at TEXT);
    CREATE TABLE session_messages (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL, content TEXT, created_at TEXT, meta_json TEXT);
    CREATE TABLE session_state (session_id TEXT NOT NULL, key TEXT NOT NULL, value TEXT, PRIMARY KEY (session_id, key));
  `);
  db.prepare("INSERT INTO session_index VALUES (?, ?)").run("discord:bob", "s-new");
  const session = db.prepare("INSERT INTO sessions VALUES (?, ?, ?, ?, ?, ?)");
  session.run("s-old", "discord:bob", "closed", "", "2026-02-01 09:00:00", "2026-02-01 09:05:00");
  session.run("s-new", "discord:bob", "active", "", "2026-02-02 09:00:00", "2026-02-02 09:30:00");
  const message = db.prepare(
    "INSERT INTO session_messages (id, session_id, role, content, created_at) VALUES (?, ?, ?, ?, ?)",
  );
  message.run(1, "s-old", "user", "first week", "2026-02-01 09:00:00");
  message.run(2, "s-old", "assistant", "noted", "2026-02-01 09:00:05");
  message.run(3, "s-new", "user", "one", "2026-02-02 09:00:00");
  message.run(4, "s-new", "assistant", "two", "2026-02-02 09:00:05");
  message.run(5, "s-new", "assistant", "Summary: counting so far.", "2026-02-02 09:10:00");
  message.run(6, "s-new", "robot", "beep", "2026-02-02 09:11:00");
  message.run(7, "s-new", "user", "three", "2026-02-02 09:20:00");
  db.prepare("INSERT INTO session_state VALUES (?, ?, ?)").run("s-new", "compaction_after_message_id", "4");
  db.close();
}

export function writeOpenclaw(dir: string): void {
  const main = join(dir, "agents", "main", "sessions");
  mkdirSync(main, { recursive: true });
  writeFileSync(
    join(main, "sessions.json"),
    JSON.stringify({
      "agent:main:telegram:direct:42": { sessionId: "0b6e-s1", updatedAt: 1772100000000 },
      "agent:main:telegram:direct:43": { sessionId: "../../escape", updatedAt: 1772100000000 },
    }),
  );
  writeFileSync(
    join(main, "0b6e-s1.jsonl"),
    line({ type: "session", version: 3, id: "0b6e-s1", timestamp: "2026-02-26T10:00:00.000Z", cwd: "/w" }) +
      line({ type: "model_change", id: "m0", provider: "x", modelId: "y" }) +
      line({
        type: "message",
        id: "e1",
        timestamp: "2026-02-26T10:00:01.000Z",
        message: { role: "user", content: [{ type: "text", text: "log me in" }] },
      }) +
      line({
        type: "message",
        id: "e2",
        timestamp: "2026-02-26T10:00:02.000Z",
        message: {
          role: "assistant",
          content: [
            { type: "text", text: "logging in" },
            { type: "toolCall", id: "t1", name: "login", arguments: { user: "ann", password: "hunter2" } },
          ],
        },
      }) +
      line({
        type: "message",
        id: "e3",
        timestamp: "2026-02-26T10:00:03.000Z",
        message: { role: "toolResult", content: [{ type: "text", text: "ok" }] },
      }) +
      "garbage line\n" +
      line({
        type: "message",
        id: "e4",
        timestamp: "2026-02-26T10:00:04.000Z",
        message: { role: "user", content: "thanks" },
      }) +
      line({
        type: "compaction",
        id: "c1",
        timestamp: "2026-02-26T10:00:05.000Z",
        summary: "Ann logged in.",
        firstKeptEntryId: "e4",
        tokensBefore: 30,
      }) +
      line({
        type: "message",
        id: "e5",
        timestamp: "2026-02-26T10:00:06.000Z",
        message: { role: "assistant", content: "you're welcome" },
      }),
  );
  const ops = join(dir, "agents", "ops");
  mkdirSync(ops, { recursive: true });
  const db = new Database(join(ops, "sessions.sqlite"));
  db.exec(`
    CREATE TABLE sessions (session_key TEXT PRIMARY KEY, session_id TEXT NOT NULL, updated_at INTEGER);
    CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT NOT NULL, PRIMARY KEY (session_id, seq));
  `);
  db.prepare("INSERT INTO sessions VALUES (?, ?, ?)").run("agent:ops:discord:group:55", "g55", 1772100000000);
  const event = db.prepare("INSERT INTO transcript_events VALUES (?, ?, ?)");
  event.run("g55", 1, JSON.stringify({ type: "session", id: "g55", timestamp: "2026-02-20T08:00:00Z" }));
  event.run(
    "g55",
    2,
    JSON.stringify({
      type: "message",
      id: "a",
      timestamp: "2026-02-20T08:00:01Z",
      message: { role: "user", content: "deploy?" },
    }),
  );
  event.run("g55", 3, "{broken");
  event.run(
    "g55",
    4,
    JSON.stringify({
      type: "message",
      id: "b",
      timestamp: "2026-02-20T08:00:03Z",
      message: { role: "assistant", content: "deployed" },
    }),
  );
  db.close();
}

export function writeNanobot(dir: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "telegram_123.jsonl"),
    line({
      _type: "metadata",
      key: "telegram:123",
      created_at: "2026-01-05T08:00:00",
      updated_at: "2026-01-05T08:10:00",
      metadata: {},
      last_consolidated: 0,
    }) +
      line({ role: "user", content: "weather?", timestamp: "2026-01-05T08:00:00" }) +
      line({
        role: "assistant",
        content: "",
        tool_calls: [
          { id: "w1", type: "function", function: { name: "weather", arguments: '{"city":"Oslo"}' } },
        ],
        timestamp: "2026-01-05T08:00:01",
      }) +
      line({
        role: "tool",
        tool_call_id: "w1",
        name: "weather",
        content: "-3C",
        timestamp: "2026-01-05T08:00:02",
      }) +
      line({ role: "assistant", content: "It is -3C in Oslo.", timestamp: "2026-01-05T08:00:03" }) +
      line({ role: 7, content: "bad role" }),
  );
}

export function writePicoclaw(dir: string): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "slack_u9.jsonl"),
    line({ role: "user", content: "a" }) +
      line({ role: "assistant", content: "b" }) +
      line({ role: "user", content: "c" }) +
      line({ role: "assistant", content: "d" }),
  );
  writeFileSync(
    join(dir, "slack_u9.meta.json"),
    JSON.stringify({
      key: "slack:u9",
      summary: "a and b were said.",
      skip: 2,
      count: 4,
      created_at: "2026-01-01T00:00:00Z",
      updated_at: "2026-01-01T00:01:00Z",
    }),
  );
  // Log already rewritten: only the summary stands for what went before.
  writeFileSync(join(dir, "slack_u10.jsonl"), line({ role: "user", content: "after" }));
  writeFileSync(
    join(dir, "slack_u10.meta.json"),
    JSON.stringify({ key: "slack:u10", summary: "Earlier: greetings.", skip: 0 }),
  );
}
