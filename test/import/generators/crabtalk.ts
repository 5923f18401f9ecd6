// A CrabTalk sessions/ folder built field by field from peer-formats.md §2 (v0.0.19 flat lines, v0.0.20
// nested lines and events), plus a file sessiond's JSONL store wrote with one bad metadata field.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { compact, lines } from "./json-styles.js";

const meta = (createdBy: string, title: unknown, at: string) => ({
  agent: "crab",
  created_by: createdBy,
  created_at: at,
  title,
  uptime_secs: 12,
});

export function writeCrabtalk(root: string): void {
  const dir = join(root, "sessions");
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "crab_tg-12345_1.jsonl"),
    lines(compact, [
      meta("tg:12345", "", "2026-11-30T08:40:00.000000001+00:00"),
      { role: "user", content: "find flights" },
      {
        role: "assistant",
        tool_calls: [
          { id: "call_9", type: "function", function: { name: "flights", arguments: '{"to":"LIS"}' } },
        ],
      },
      { role: "tool", name: "flights", tool_call_id: "call_9" },
      { role: "assistant", content: "No flights today.", reasoning_content: "Empty result." },
      {
        compact: "User looked for flights to Lisbon. None today.",
        title: "User looked for flights to Lisbon.",
        archived_at: "2026-11-30T08:42:05.100+00:00",
      },
      { role: "user", content: "try tomorrow" },
      { role: "assistant", content: "Tomorrow: 3 options." },
    ]),
  );
  writeFileSync(
    join(dir, "crab_tg-12345_2_lisbon-trip.jsonl"),
    lines(compact, [
      meta("tg:12345", "Lisbon trip", "2026-12-01T09:00:00.123+00:00"),
      { message: { role: "user", content: "book the 9:00" } },
      {
        message: {
          role: "assistant",
          content: null,
          tool_calls: [
            { id: "c1", type: "function", function: { name: "book", arguments: '{"flight":"TP1"}' } },
          ],
        },
      },
      {
        event: "tool_start",
        calls: [{ id: "c1", name: "book", arguments: '{"flight":"TP1"}' }],
        ts: "2026-12-01T09:00:01+00:00",
      },
      { message: { role: "tool", content: "booked", tool_call_id: "c1", name: "book" } },
      { event: "tool_result", call_id: "c1", duration_ms: 12, ts: "2026-12-01T09:00:02+00:00" },
      { agent: "helper", message: { role: "assistant", content: "Seat 12A is yours." } },
      "{not json",
      {
        event: "done",
        model: "gpt-5",
        iterations: 2,
        stop_reason: "stop",
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        ts: "2026-12-01T09:00:03+00:00",
      },
    ]),
  );
  // The local owner, with a title of the wrong type: reported, the session still comes in.
  writeFileSync(
    join(dir, "crab_user_1.jsonl"),
    lines(compact, [meta("user", 5, "2026-11-29T10:00:00+00:00"), { role: "user", content: "note to self" }]),
  );
  // Written by sessiond's JSONL store (its fields on the metadata line), with a chat_type of the wrong type.
  writeFileSync(
    join(dir, "main_42_1.jsonl"),
    lines(compact, [
      {
        agent: "main",
        created_by: "42",
        created_at: "2026-11-28T10:00:00.000Z",
        title: "",
        uptime_secs: 0,
        key: "slack:42",
        session_id: "01JD0000000000000000000000",
        generation: 1,
        channel: "slack",
        chat_type: {},
      },
      {
        role: "user",
        content: "hello from sessiond",
        seq: 1,
        id: "01JD0000000000000000000001",
        ts: 1796119200000,
      },
    ]),
  );
}
