import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { importTwice, shape, useImportDir } from "./helpers.js";

const t = useImportDir();

describe("import --from zeroclaw", () => {
  it("a JSONL key of another channel cannot be split back into its parts: it stays opaque", async () => {
    const src = t.fixture("zeroclaw");
    writeFileSync(
      join(src, "sessions", "slack_C1_u_2.jsonl"),
      `${JSON.stringify({ role: "user", content: "[2026-12-01 09:00:00 +00:00] hi" })}\n`,
    );
    await importTwice(t.store(), "zeroclaw", src);
    expect((await t.store().getSession("slack:C1_u_2"))!.messageCount).toBe(1);
  });

  it("sessions.db rows and JSONL lines: tool turns from their JSON text, stamped times, routed keys", async () => {
    const src = t.fixture("zeroclaw");
    const report = await importTwice(t.store(), "zeroclaw", src);
    const dave = join(src, "sessions", "telegram_-100777_42_42_dave.jsonl");
    expect(report.problems).toEqual([
      { file: join(src, "sessions", "sessions.db"), row: "sessions 7", reason: 'unknown role "robot"' },
      { file: dave, line: 9, reason: "torn last line (no newline, not JSON)" },
      { file: dave, line: 6, reason: "not a ZeroClaw message ({role, content} strings)" },
    ]);
    // carol's JSONL was already imported into the database (jsonl_import_receipts): only once.
    expect(report.summary).toMatchObject({ sessions: 4, toolCalls: 2, toolResults: 2, titles: 1 });

    const alice = await t.store().getSession("telegram:12345");
    expect(alice).toMatchObject({ title: "Reminders", channel: "telegram", createdBy: "alice" });
    const entries = await t.store().readEntries(alice!.id);
    expect(shape(entries)).toEqual([
      "title:Reminders",
      "user:remind me at 5",
      "assistant: [reminder#call_1]",
      "tool(call_1):reminder set",
      "assistant:Done: 17:00.",
    ]);
    // `[2026-12-01 09:00:00 +01:00] ` is the user's own time; the key named in api_key is dropped.
    expect(entries[1]!.ts).toBe(Date.parse("2026-12-01T08:00:00Z"));
    expect(entries[2]).toMatchObject({
      toolCalls: [{ id: "call_1", name: "reminder", arguments: { at: "17:00" } }],
    });
    expect(JSON.stringify(entries)).not.toContain("sk-live");

    // The channel from channel_id `discord.clamps` (alias dropped), the DM keyed as sessiond keys it.
    expect(shape(await t.store().readEntries((await t.store().getSession("discord:dm:bob"))!.id))).toEqual([
      "user:status?",
      "note(ZEROCLAW_NO_REPLY):[No reply sent]",
    ]);
    // A Telegram forum topic: the key carries the thread twice; blank lines skipped as ZeroClaw does.
    const topic = (await t.store().loadContext("telegram:-100777:thread:42"))!;
    expect(topic.session).toMatchObject({ chatType: "group", createdBy: "dave" });
    expect(shape(topic.entries)).toEqual([
      "user:list files",
      "assistant: [shell#call_2]",
      "tool(call_2):a.txt",
      "assistant:One file: a.txt.",
      "user:thanks",
      // ZeroClaw keeps it in its history as an assistant message, and so does the import.
      "assistant:[Session interrupted — not continuing this request]",
    ]);
    expect(shape(await t.store().readEntries((await t.store().getSession("telegram:555"))!.id))).toEqual([
      "user:old",
      "assistant:imported before",
    ]);
  });
});
