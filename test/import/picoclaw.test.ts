import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { picoKey } from "./generators/picoclaw.js";
import { importTwice, shape, useImportDir } from "./helpers.js";

const t = useImportDir();

describe("import --from picoclaw", () => {
  it("skip counts physical lines (tool calls, results, a corrupt line): the summary lands where PicoClaw's context starts", async () => {
    const src = t.fixture("picoclaw");
    const report = await importTwice(t.store(), "picoclaw", src);
    const key = picoKey("v=1|agent=main|channel=telegram|account=default|chat=direct:12345");
    expect(report.problems).toEqual([
      { file: join(src, "sessions", `${key}.jsonl`), line: 5, reason: "not JSON" },
    ]);
    // The key from the meta's scope: the chat sessiond routes the next Telegram message of to.
    const session = (await t.store().getSession("telegram:12345"))!;
    const entries = await t.store().readEntries(session.id);
    expect(shape(entries)).toEqual([
      "user:plan a trip",
      "assistant: [weather#call_1]",
      "tool(call_1):21C & clear",
      "assistant:It is 21C <nice>.",
      "user:book it",
      "assistant:Booked.",
      // Summarised after the turn (meta updated_at), keeping the lines after `skip`.
      "compaction:User plans a trip to Lisbon; it is 21C.",
    ]);
    // "12:00:03+08:00" is 04:00:03Z, before the line above it (12:00:02Z): raised to it, times stay monotonic.
    expect(entries[3]!.ts).toBe(Date.parse("2026-11-30T12:00:02Z"));
    expect(entries[6]).toMatchObject({ ts: Date.parse("2026-11-30T12:05:01Z"), firstKeptSeq: 5 });
    const context = (await t.store().loadContext("telegram:12345"))!;
    expect(shape(context.entries.filter((e) => e.type === "message"))).toEqual([
      "user:book it",
      "assistant:Booked.",
    ]);

    // The legacy whole-session file, keyed by its alias; the .json.migrated one is not read.
    const legacy = (await t.store().loadContext("discord:dm:u9"))!;
    expect(legacy.summary?.summary).toBe("Earlier: greetings.");
    expect(shape(legacy.entries.filter((e) => e.type === "message"))).toEqual(["user:hi", "assistant:hello"]);
    expect(report.imported.sessions).toBe(2);
  });
});
