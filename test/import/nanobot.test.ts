import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { WORKSPACE_ID } from "./generators/nanobot.js";
import { importTwice, shape, useImportDir } from "./helpers.js";

const t = useImportDir();

describe("import --from nanobot", () => {
  it("the per-workspace layout: base64url names, title, summary after last_consolidated, commands kept out", async () => {
    const src = t.fixture("nanobot");
    const report = await importTwice(t.store(), "nanobot", src);
    const slack = join(src, "sessions", WORKSPACE_ID, "c2xhY2s6Qzk.jsonl");
    expect(report.problems).toEqual([
      { file: slack, line: 3, reason: "not JSON" },
      { file: slack, line: 1, reason: "metadata.title is not text; left out" },
    ]);
    const session = (await t.store().getSession("telegram:12345"))!;
    expect(session.title).toBe("Lisbon trip");
    const entries = await t.store().readEntries(session.id);
    expect(shape(entries)).toEqual([
      "user:plan a trip",
      "assistant: [weather#call_1]",
      "tool(call_1):21C",
      "assistant:Lisbon is 21C.",
      "compaction:User plans a trip; Lisbon is 21C.",
      "note(NANOBOT_COMMAND):user: /status",
      "note(NANOBOT_COMMAND):assistant: Session: 6 messages",
      "user:book it",
      "assistant:Booked.",
      "title:Lisbon trip",
    ]);
    expect(entries[0]!.ts).toBe(Date.parse("2026-11-30T10:00:00Z"));
    expect(entries[4]).toMatchObject({ ts: Date.parse("2026-11-30T10:02:30Z"), firstKeptSeq: 5 });
    expect(entries[8]).toMatchObject({ parts: [{ kind: "thinking", text: "The user confirmed." }] });
    expect(JSON.stringify(entries)).not.toContain("sk-live");
    const context = (await t.store().loadContext("telegram:12345"))!;
    expect(context.summary?.summary).toBe("User plans a trip; Lisbon is 21C.");
    expect(shape(context.entries.filter((e) => e.type === "message"))).toEqual([
      "user:book it",
      "assistant:Booked.",
    ]);
    expect(shape(await t.store().readEntries((await t.store().getSession("slack:C9"))!.id))).toEqual([
      "user:hi",
      "assistant:hello",
    ]);
  });

  it("the older flat layout with lossy names", async () => {
    const src = t.fixture("nanobot-flat");
    await importTwice(t.store(), "nanobot", src);
    const entries = await t.store().readEntries((await t.store().getSession("telegram:42"))!.id);
    expect(shape(entries)).toEqual(["user:weather?", "assistant:It is -3C in Oslo."]);
  });
});
