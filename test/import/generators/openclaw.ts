// OpenClaw state folders built field by field from peer-formats.md §1 (2026.7.1 JSONL, 2026.9.6 SQLite).
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { compact, lines } from "./json-styles.js";

const usage = {
  input: 12,
  output: 7,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 19,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};
const assistant = (content: unknown[], timestamp: number, stopReason = "stop") => ({
  role: "assistant",
  content,
  api: "openai-responses",
  provider: "openai",
  model: "gpt-5",
  usage,
  stopReason,
  timestamp,
});

/** The Lisbon conversation, as OpenClaw's transcript lines; `big` makes two lines big enough for zstd. */
export function lisbonLines(sessionId: string, version: number, big: boolean): object[] {
  const pad = big ? ` ${"Lisbon sits on seven hills above the Tagus. ".repeat(30)}` : "";
  return [
    { type: "session", version, id: sessionId, timestamp: "2026-12-01T08:31:32.235Z", cwd: "/srv/agent" },
    {
      type: "model_change",
      id: "a1b2c3d4",
      parentId: null,
      timestamp: "2026-12-01T08:31:32.236Z",
      provider: "openai",
      modelId: "gpt-5",
    },
    {
      type: "message",
      id: "7f1c9a52-0d7e-4f0a-9d57-1f2e3a4b5c01",
      parentId: "a1b2c3d4",
      timestamp: "2026-12-01T08:31:32.240Z",
      message: {
        role: "user",
        content: [{ type: "text", text: "weather in Lisbon?" }],
        timestamp: 1796099614000,
        idempotencyKey: "tg-1001",
      },
    },
    // An abandoned branch: a reply that was regenerated (the next message has the same parent).
    {
      type: "message",
      id: "0badbeef",
      parentId: "7f1c9a52-0d7e-4f0a-9d57-1f2e3a4b5c01",
      timestamp: "2026-12-01T08:31:32.250Z",
      message: assistant([{ type: "text", text: "abandoned draft" }], 1796099615000),
    },
    {
      type: "message",
      id: "7f1c9a52-0d7e-4f0a-9d57-1f2e3a4b5c02",
      parentId: "7f1c9a52-0d7e-4f0a-9d57-1f2e3a4b5c01",
      timestamp: "2026-12-01T08:31:32.275Z",
      message: assistant(
        [
          { type: "thinking", thinking: "Need the weather tool.", thinkingSignature: "sig-1" },
          { type: "text", text: `Checking.${pad}` },
          {
            type: "toolCall",
            id: "call_w1",
            name: "weather",
            arguments: { city: "Lisbon", api_key: "sk-liv…uvwx", password: "hunter2" },
          },
        ],
        1796099675000,
        "toolUse",
      ),
    },
    {
      type: "message",
      id: "7f1c9a52-0d7e-4f0a-9d57-1f2e3a4b5c03",
      parentId: "7f1c9a52-0d7e-4f0a-9d57-1f2e3a4b5c02",
      timestamp: "2026-12-01T08:31:32.284Z",
      message: {
        role: "toolResult",
        toolCallId: "call_w1",
        toolName: "weather",
        content: [{ type: "text", text: `21C, clear. token=ghp_abcdefghijklmnopqrstuvwxyz0123456789${pad}` }],
        isError: false,
        timestamp: 1796099736000,
      },
    },
    {
      type: "message",
      id: "7f1c9a52-0d7e-4f0a-9d57-1f2e3a4b5c04",
      parentId: "7f1c9a52-0d7e-4f0a-9d57-1f2e3a4b5c03",
      timestamp: "2026-12-01T08:31:32.300Z",
      message: assistant([{ type: "text", text: "It is 21C and clear." }], 1796099740000),
    },
    {
      type: "compaction",
      id: "fc9f6391",
      parentId: "7f1c9a52-0d7e-4f0a-9d57-1f2e3a4b5c04",
      timestamp: "2026-12-01T08:31:32.314Z",
      summary: "User asked about the weather in Lisbon: 21C.",
      firstKeptEntryId: "7f1c9a52-0d7e-4f0a-9d57-1f2e3a4b5c04",
      tokensBefore: 1234,
      details: { readFiles: [], modifiedFiles: [] },
    },
    {
      type: "session_info",
      id: "32a14596",
      parentId: "fc9f6391",
      timestamp: "2026-12-01T08:31:32.315Z",
      name: "Trip to Lisbon",
    },
    {
      type: "label",
      id: "5e6f7a8b",
      parentId: "32a14596",
      timestamp: "2026-12-01T08:31:32.316Z",
      targetId: "fc9f6391",
      label: "bookmark",
      appendMode: "side",
    },
    {
      type: "message",
      id: "7f1c9a52-0d7e-4f0a-9d57-1f2e3a4b5c05",
      parentId: "32a14596",
      timestamp: "2026-12-01T08:35:00.000Z",
      message: { role: "user", content: "thanks", timestamp: 1796100000000 },
    },
    {
      type: "message",
      id: "7f1c9a52-0d7e-4f0a-9d57-1f2e3a4b5c06",
      parentId: "7f1c9a52-0d7e-4f0a-9d57-1f2e3a4b5c05",
      timestamp: "2026-12-01T08:35:01.000Z",
      message: assistant([{ type: "text", text: "You're welcome." }], 1796100001000),
    },
  ];
}

const pair = (sessionId: string, timestamp: string, user: string, reply: string, at: number): object[] => [
  { type: "session", version: 3, id: sessionId, timestamp, cwd: "/srv/agent" },
  {
    type: "message",
    id: `${sessionId}-1`,
    parentId: null,
    timestamp,
    message: { role: "user", content: user, timestamp: at },
  },
  {
    type: "message",
    id: `${sessionId}-2`,
    parentId: `${sessionId}-1`,
    timestamp,
    message: assistant([{ type: "text", text: reply }], at + 1000),
  },
];

export function writeOpenclaw7(root: string): void {
  const main = join(root, "agents", "main", "sessions");
  const work = join(root, "agents", "work", "sessions");
  mkdirSync(main, { recursive: true });
  mkdirSync(work, { recursive: true });
  mkdirSync(join(root, "state"), { recursive: true });
  const store = {
    "agent:main:telegram:direct:12345": {
      sessionId: "b3f1c2d4-live",
      updatedAt: 1796100001000,
      // Written by a gateway on another machine: re-anchored to this folder by its file name.
      sessionFile: "/home/ann/.openclaw/agents/main/sessions/b3f1c2d4-live.jsonl",
      channel: "telegram",
      chatType: "direct",
      lastChannel: "telegram",
      lastTo: "12345",
      systemSent: true,
      abortedLastRun: false,
      model: "gpt-5",
      modelProvider: "openai",
      inputTokens: 12,
      outputTokens: 7,
      totalTokens: 19,
      compactionCount: 1,
    },
    "agent:main:discord:channel:c42": {
      sessionId: "d4e5-channel",
      updatedAt: 1796000000000,
      channel: "discord",
    },
    "agent:main:main": { sessionId: "e5f6-main", updatedAt: 1796000000000, lastChannel: "whatsapp" },
    // A key with no transcript yet: normal, nothing to bring in.
    "agent:main:telegram:direct:777": { sessionId: "f6a7-empty", updatedAt: 1796000000000 },
    "agent:main:telegram:direct:666": { sessionId: "../../escape", updatedAt: 1796000000000 },
  };
  writeFileSync(join(main, "sessions.json"), JSON.stringify(store, null, 2));
  // Reset at 08:30 (the stamp), the next transcript started 08:31:32.
  writeFileSync(
    join(main, "a0a0-before.jsonl.reset.2026-12-01T08-30-00.000Z"),
    lines(compact, pair("a0a0-before", "2026-12-01T08:00:00.000Z", "hello", "hi Ann", 1796097600000)),
  );
  const live = lisbonLines("b3f1c2d4-live", 3, false);
  writeFileSync(
    join(main, "b3f1c2d4-live.jsonl"),
    lines(compact, [...live.slice(0, 6), "garbage line", ...live.slice(6)]),
  );
  writeFileSync(
    join(main, "d4e5-channel.jsonl"),
    lines(compact, pair("d4e5-channel", "2026-11-30T10:00:00.000Z", "deploy?", "deployed", 1796032800000)),
  );
  writeFileSync(
    join(main, "e5f6-main.jsonl"),
    lines(compact, pair("e5f6-main", "2026-11-30T11:00:00.000Z", "ping", "pong", 1796036400000)),
  );
  writeFileSync(
    join(work, "sessions.json"),
    JSON.stringify(
      {
        "agent:work:discord:bota:direct:u777": {
          sessionId: "c7d8-work",
          updatedAt: 1796000000000,
          label: "Release checklist",
        },
      },
      null,
      2,
    ),
  );
  writeFileSync(
    join(work, "c7d8-work.jsonl"),
    lines(compact, pair("c7d8-work", "2026-11-30T12:00:00.000Z", "ship it?", "shipped", 1796040000000)),
  );
}

/** zstd frame at level 1 with the content checksum, as OpenClaw writes it (the Debian `zstd` tool). */
function zstd(text: string): Buffer {
  return execFileSync("zstd", ["-1", "--check", "-q", "-c"], { input: Buffer.from(text, "utf8") });
}

export function writeOpenclaw9(root: string): void {
  const agentDir = join(root, "agents", "main", "agent");
  mkdirSync(agentDir, { recursive: true });
  mkdirSync(join(root, "agents", "main", "sessions"), { recursive: true });
  mkdirSync(join(root, "state"), { recursive: true });
  const global = new Database(join(root, "state", "openclaw.sqlite"));
  global.exec(`
    CREATE TABLE schema_meta (meta_key TEXT PRIMARY KEY, role TEXT, schema_version INTEGER, agent_id TEXT, app_version TEXT, created_at INTEGER, updated_at INTEGER) STRICT;
    CREATE TABLE agent_databases (agent_id TEXT PRIMARY KEY, path TEXT NOT NULL, schema_version INTEGER, last_seen_at INTEGER, size_bytes INTEGER) STRICT;
  `);
  global
    .prepare(
      "INSERT INTO schema_meta VALUES ('primary','global',18,NULL,'2026.9.6',1796000000000,1796000000000)",
    )
    .run();
  global
    .prepare(
      "INSERT INTO agent_databases VALUES ('main','agents/main/agent/openclaw-agent.sqlite',23,1796100001000,0)",
    )
    .run();
  global.close();

  const db = new Database(join(agentDir, "openclaw-agent.sqlite"));
  db.pragma("user_version = 23");
  db.exec(`
    CREATE TABLE schema_meta (meta_key TEXT PRIMARY KEY, role TEXT, schema_version INTEGER, agent_id TEXT, app_version TEXT, created_at INTEGER, updated_at INTEGER) STRICT;
    CREATE TABLE session_nodes (session_key TEXT PRIMARY KEY, current_session_id TEXT NOT NULL, entry_json TEXT NOT NULL, entry_valid INTEGER, updated_at INTEGER, created_at INTEGER, last_interaction_at INTEGER, last_activity_at INTEGER, last_read_at INTEGER, pinned_at INTEGER, archived_at INTEGER, label TEXT, display_name TEXT, category TEXT, icon TEXT, status TEXT, created_via TEXT, parent_session_key TEXT, spawned_by TEXT) STRICT;
    CREATE TABLE session_windows (session_id TEXT PRIMARY KEY, session_key TEXT NOT NULL, previous_session_id TEXT, reason TEXT, session_scope TEXT, created_at INTEGER, updated_at INTEGER, transcript_updated_at INTEGER, transcript_observed_at INTEGER, started_at INTEGER, ended_at INTEGER, chat_type TEXT, channel TEXT, account_id TEXT, primary_conversation_id TEXT, display_name TEXT, model_provider TEXT, model TEXT, status TEXT) STRICT;
    CREATE TABLE transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT, event_zstd BLOB, event_utf8_bytes INTEGER, navigation_json TEXT, created_at INTEGER, PRIMARY KEY (session_id, seq)) STRICT;
    CREATE TABLE transcript_event_identities (session_id TEXT NOT NULL, event_id TEXT NOT NULL, seq INTEGER, event_type TEXT, parent_id TEXT, message_idempotency_key TEXT, created_at INTEGER, PRIMARY KEY (session_id, event_id)) STRICT;
    CREATE TABLE session_transcript_active_events (session_id TEXT NOT NULL, active_position INTEGER NOT NULL, event_seq INTEGER, message_position INTEGER, context_eligible INTEGER, PRIMARY KEY (session_id, active_position)) STRICT;
    CREATE TABLE session_transcript_archives (session_id TEXT NOT NULL, generation INTEGER NOT NULL, session_key TEXT, reason TEXT, encoding TEXT, archive_blob BLOB, archive_sha256 TEXT, archive_name TEXT UNIQUE, created_at INTEGER, published_at INTEGER, publish_attempts INTEGER, PRIMARY KEY (session_id, generation)) STRICT;
  `);
  db.prepare(
    "INSERT INTO schema_meta VALUES ('primary','agent',23,'main','2026.9.6',1796000000000,1796000000000)",
  ).run();
  const node = db.prepare(
    "INSERT INTO session_nodes (session_key, current_session_id, entry_json, entry_valid, updated_at, created_at, label, display_name) VALUES (?, ?, ?, 1, ?, ?, ?, ?)",
  );
  const window = db.prepare(
    "INSERT INTO session_windows (session_id, session_key, previous_session_id, reason, session_scope, created_at, updated_at, display_name) VALUES (?, ?, ?, ?, 'conversation', ?, ?, ?)",
  );
  const event = db.prepare(
    "INSERT INTO transcript_events (session_id, seq, event_json, event_zstd, event_utf8_bytes, navigation_json, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
  );
  const dm = "agent:main:telegram:direct:12345";
  node.run(
    dm,
    "w2-live",
    compact({
      sessionId: "w2-live",
      updatedAt: 1796100001000,
      delivery: { kind: "none" },
      label: "Trip to Lisbon",
    }),
    1796100001000,
    1796097600000,
    "Trip to Lisbon",
    "Trip to Lisbon",
  );
  window.run("w1-before", dm, null, "initial", 1796097600000, 1796099400000, null);
  window.run("w2-live", dm, "w1-before", "reset", 1796099492235, 1796100001000, "Trip to Lisbon");
  const before = pair("w1-before", "2026-12-01T08:00:00.000Z", "hello", "hi Ann", 1796097600000);
  db.prepare(
    "INSERT INTO session_transcript_archives (session_id, generation, session_key, reason, encoding, archive_blob, archive_name, created_at) VALUES (?, 1, ?, 'reset', 'zstd', ?, ?, ?)",
  ).run(
    "w1-before",
    dm,
    zstd(lines(compact, before)),
    "w1-before.jsonl.reset.2026-12-01T08-30-00.000Z",
    1796099400000,
  );
  lisbonLines("w2-live", 4, true).forEach((line, seq) => {
    const text = compact(line);
    const created = Date.parse((line as { timestamp: string }).timestamp);
    const bytes = Buffer.byteLength(text);
    // OpenClaw's rule: 1 KiB or more, no \u escapes, not the header.
    if (bytes >= 1024 && !text.includes("\\u") && seq > 0) {
      const navigation = compact({
        version: 1,
        report: { kind: "message" },
        navigation: {},
        modelBytes: bytes,
      });
      event.run("w2-live", seq, null, zstd(text), bytes, navigation, created);
    } else event.run("w2-live", seq, text, null, bytes, null, created);
  });

  const group = "agent:main:telegram:group:-100777:thread:99";
  node.run(
    group,
    "g1",
    compact({ sessionId: "g1", updatedAt: 1796000000000 }),
    1796000000000,
    1796000000000,
    null,
    null,
  );
  window.run("g1", group, null, "initial", 1796000000000, 1796000000000, null);
  const g = pair("g1", "2026-11-30T09:00:00.000Z", "standup at 10?", "yes, 10:00", 1796029200000);
  event.run("g1", 0, compact(g[0]), null, null, null, 1796029200000);
  event.run("g1", 1, compact(g[1]), null, null, null, 1796029200000);
  event.run("g1", 2, null, Buffer.from("not a zstd frame"), 40, "{}", 1796029200500);
  event.run("g1", 3, compact(g[2]), null, null, null, 1796029201000);
  db.close();
}
