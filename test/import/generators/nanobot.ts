// nanobot's session folders built field by field from peer-formats.md §4: the current per-workspace
// layout (base64url names) and the flat lossy one of v0.2.2.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { lines, pythonDumps } from "./json-styles.js";

export const WORKSPACE_ID = "3f2a9c0d8e7b6a5f4e3d2c1b0a998877";

export function writeNanobot(root: string): void {
  const dir = join(root, "sessions", WORKSPACE_ID);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, ".workspace"), "/home/ann/nanobot-workspace\n");
  writeFileSync(join(dir, ".session-files.lock"), "");
  writeFileSync(join(root, ".workspace-migration.lock"), "");
  const key = "telegram:12345";
  writeFileSync(
    join(dir, `${Buffer.from(key).toString("base64url")}.jsonl`),
    lines(pythonDumps, [
      {
        _type: "metadata",
        key,
        created_at: "2026-11-30T10:00:00",
        updated_at: "2026-11-30T10:05:00.123456",
        metadata: {
          title: "Lisbon trip",
          title_user_edited: false,
          _last_summary: { text: "User plans a trip; Lisbon is 21C.", last_active: "2026-11-30T10:02:30" },
          last_channel: "telegram:12345",
        },
        last_consolidated: 4,
      },
      { _type: "provider_state", state: { response_id: "resp_1" } },
      { role: "user", content: "plan a trip", timestamp: "2026-11-30T10:00:00" },
      {
        role: "assistant",
        content: "",
        tool_calls: [
          {
            id: "call_1",
            type: "function",
            function: {
              name: "weather",
              arguments: '{"city": "Lisbon", "token": "sk-live-123456789012345678901234"}',
            },
          },
        ],
        timestamp: "2026-11-30T10:00:30",
      },
      {
        role: "tool",
        tool_call_id: "call_1",
        name: "weather",
        content: "21C",
        timestamp: "2026-11-30T10:01:00",
      },
      { role: "assistant", content: "Lisbon is 21C.", timestamp: "2026-11-30T10:01:30", latency_ms: 812 },
      { role: "user", content: "/status", _command: true, timestamp: "2026-11-30T10:03:00" },
      { role: "assistant", content: "Session: 6 messages", _command: true, timestamp: "2026-11-30T10:03:01" },
      {
        role: "user",
        content: "book it\n\n[Runtime context: local time 10:04]",
        _runtime_context: { version: 1, sources: ["clock"], suffix: "[Runtime context: local time 10:04]" },
        timestamp: "2026-11-30T10:04:00",
      },
      {
        role: "assistant",
        content: "Booked.",
        reasoning_content: "The user confirmed.",
        timestamp: "2026-11-30T10:04:30",
      },
    ]),
  );
  // A second session with a bad field: one reported problem, the rest comes in.
  const other = "slack:C9";
  writeFileSync(
    join(dir, `${Buffer.from(other).toString("base64url")}.jsonl`),
    lines(pythonDumps, [
      {
        _type: "metadata",
        key: other,
        created_at: "2026-11-30T11:00:00",
        metadata: { title: 5 },
        last_consolidated: 0,
      },
      { role: "user", content: "hi", timestamp: "2026-11-30T11:00:00" },
      "{not json",
      { role: "assistant", content: "hello", timestamp: "2026-11-30T11:00:01" },
    ]),
  );
}

/** v0.2.2: `<workspace>/sessions/<safe_key>.jsonl`, flat, `:` → `_`. */
export function writeNanobotFlat(root: string): void {
  const dir = join(root, "sessions");
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "telegram_42.jsonl"),
    lines(pythonDumps, [
      {
        _type: "metadata",
        key: "telegram:42",
        created_at: "2026-01-05T08:00:00",
        updated_at: "2026-01-05T08:10:00",
        metadata: {},
        last_consolidated: 0,
      },
      { role: "user", content: "weather?", timestamp: "2026-01-05T08:00:00" },
      { role: "assistant", content: "It is -3C in Oslo.", timestamp: "2026-01-05T08:00:03" },
    ]),
  );
}
