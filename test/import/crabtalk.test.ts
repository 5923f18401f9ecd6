import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { importTwice, shape, useImportDir } from "./helpers.js";

const t = useImportDir();

describe("import --from crabtalk", () => {
  it("v0.0.19 flat and v0.0.20 nested lines: tool fields, reasoning, guest agent; markers at archived_at", async () => {
    const src = t.fixture("crabtalk");
    const report = await importTwice(t.store(), "crabtalk", src);
    const dir = join(src, "sessions");
    expect(report.problems).toEqual([
      { file: join(dir, "crab_tg-12345_2_lisbon-trip.jsonl"), line: 8, reason: "not JSON" },
      {
        file: join(dir, "crab_user_1.jsonl"),
        line: 1,
        reason: "metadata title is not a string (5); left out",
      },
      {
        file: join(dir, "main_42_1.jsonl"),
        line: 1,
        reason: "metadata chat_type is not a string ({}); left out",
      },
    ]);
    // `tg:12345` is a Telegram chat: the key sessiond routes its next message to; `crab` is the default agent.
    const gens = await t.store().generations("telegram:12345");
    expect(gens.map((g) => [g.generation, g.state, g.title, g.agent])).toEqual([
      [2, "active", "Lisbon trip", "main"],
      [1, "archived", "", "main"],
    ]);
    const first = await t.store().readEntries(gens[1]!.id);
    expect(shape(first)).toEqual([
      "user:find flights",
      "assistant: [flights#call_9]",
      "tool(call_9):",
      "assistant:No flights today.",
      "compaction:User looked for flights to Lisbon. None today.",
      "user:try tomorrow",
      "assistant:Tomorrow: 3 options.",
      "reset",
    ]);
    expect(first[2]).toMatchObject({ parts: [{ kind: "tool", name: "flights" }] });
    expect(first[3]).toMatchObject({ parts: [{ kind: "thinking", text: "Empty result." }] });
    expect(first[4]!.ts).toBe(Date.parse("2026-11-30T08:42:05.100Z"));
    const second = await t.store().readEntries(gens[0]!.id);
    expect(shape(second)).toEqual([
      "user:book the 9:00",
      "assistant: [book#c1]",
      "tool(c1):booked",
      "assistant:Seat 12A is yours.",
      "title:Lisbon trip",
    ]);
    expect(second[3]).toMatchObject({ sender: { id: "helper" } });
    // No time on message lines: the next event's `ts` after them.
    expect(second[0]!.ts).toBe(Date.parse("2026-12-01T09:00:01Z"));
    // The bad fields cost only themselves.
    expect((await t.store().getSession("crab:user"))!.messageCount).toBe(1);
    expect((await t.store().getSession("slack:42"))!.messageCount).toBe(1);
  });
});
