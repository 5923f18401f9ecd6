// A PicoClaw workspace's sessions/ built field by field from peer-formats.md §5 (Go's encoding/json).
import { createHash } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { goMarshal, goMarshalIndent, lines } from "./json-styles.js";

export const picoKey = (signature: string) =>
  `sk_v1_${createHash("sha256").update(signature.trim().toLowerCase()).digest("hex")}`;

export function writePicoclaw(root: string): void {
  const dir = join(root, "sessions");
  mkdirSync(dir, { recursive: true });
  const key = picoKey("v=1|agent=main|channel=telegram|account=default|chat=direct:12345");
  writeFileSync(
    join(dir, `${key}.jsonl`),
    lines(goMarshal, [
      { role: "user", content: "plan a trip", created_at: "2026-11-30T12:00:00.123456789Z" },
      {
        role: "assistant",
        content: "",
        model_name: "gpt-5",
        created_at: "2026-11-30T12:00:01.5Z",
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "weather", arguments: '{"city":"Lisbon"}' } },
        ],
      },
      { role: "tool", content: "21C & clear", created_at: "2026-11-30T12:00:02Z", tool_call_id: "call_1" },
      { role: "assistant", content: "It is 21C <nice>.", created_at: "2026-11-30T12:00:03+08:00" },
      '{"role":"user","content":"corrupt',
      { role: "user", content: "book it", created_at: "2026-11-30T12:05:00Z" },
      {
        role: "assistant",
        content: "Booked.",
        reasoning_content: "Confirmed by the user.",
        created_at: "2026-11-30T12:05:01Z",
      },
    ]),
  );
  writeFileSync(
    join(dir, `${key}.meta.json`),
    goMarshalIndent({
      key,
      summary: "User plans a trip to Lisbon; it is 21C.",
      skip: 5,
      count: 7,
      created_at: "2026-11-30T12:00:00Z",
      updated_at: "2026-11-30T12:05:01Z",
      scope: {
        version: 1,
        agent_id: "main",
        channel: "telegram",
        account: "default",
        dimensions: ["chat"],
        values: { chat: "direct:12345" },
      },
      aliases: [
        "agent:main:main",
        "agent:main:direct:12345",
        "agent:main:telegram:direct:12345",
        "agent:main:telegram:default:direct:12345",
      ],
    }),
  );
  // Legacy whole-session file, not yet migrated; and one already migrated (ignored).
  writeFileSync(
    join(dir, "agent_main_discord_direct_u9.json"),
    goMarshalIndent({
      key: "agent:main:discord:direct:u9",
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: "hello" },
      ],
      summary: "Earlier: greetings.",
      created: "2026-11-01T00:00:00Z",
      updated: "2026-11-01T00:01:00Z",
    }),
  );
  writeFileSync(
    join(dir, "agent_main_slack_direct_u1.json.migrated"),
    goMarshalIndent({ key: "x", messages: [] }),
  );
}
