import { describe, expect, it } from "vitest";
import type { Entry } from "../../src/model/entry.js";
import { gunzipAll, importTwice, shape, unpadded, useImportDir } from "./helpers.js";

// State folders written by OpenClaw's own code (test/import/generators/openclaw-real.mjs): its output wins
// over peer-formats.md where they differ. The 2026.9 databases are committed gzipped.
const t = useImportDir();

describe.each(["2026.7", "2026.9"])(
  "import --from openclaw, state written by OpenClaw %s itself",
  (version) => {
    it("every message in order, tool call and result linked, thinking kept, titles, compaction, reset, keys", async () => {
      const src = t.fixture(`openclaw-real-${version}`);
      gunzipAll(src);
      const report = await importTwice(t.store(), "openclaw", src);
      expect(report.problems).toEqual([]);
      const lisbon = [
        "user:weather in Lisbon?",
        "assistant:Checking. [weather#call_w1]",
        "tool(call_w1):21C, clear.",
        "assistant:It is 21C and clear.",
        "user:thanks",
        "assistant:You're welcome.",
      ];
      const gens = await t.store().generations("telegram:12345");
      let entries: Entry[];
      if (version === "2026.7") {
        // Compacted and titled through its SessionManager, then reset by its gateway's archive step.
        expect(report.summary).toMatchObject({
          sessions: 4,
          messages: 12,
          toolResults: 1,
          summaries: 1,
          titles: 1,
        });
        expect(gens.map((g) => [g.generation, g.state, g.title])).toEqual([
          [2, "active", ""],
          [1, "archived", "Lisbon weather"],
        ]);
        expect(shape((await t.store().loadContext("telegram:12345"))!.entries)).toEqual([
          "user:new topic: Porto?",
          "assistant:Porto is 19C.",
        ]);
        entries = await t.store().readEntries(gens[1]!.id);
        expect(unpadded(entries)).toEqual([
          ...lisbon,
          "compaction:User asked about the weather in Lisbon: 21C.",
          "title:Lisbon weather",
          "reset",
        ]);
        expect(entries[6]).toMatchObject({ fromSeq: 1, throughSeq: 4, firstKeptSeq: 5, tokensBefore: 1234 });
      } else {
        expect(report.summary).toMatchObject({ sessions: 3, messages: 10, toolResults: 1, titles: 1 });
        expect(gens.map((g) => [g.generation, g.state, g.title])).toEqual([[1, "active", "Trip to Lisbon"]]);
        entries = await t.store().readEntries(gens[0]!.id);
        expect(unpadded(entries)).toEqual([...lisbon, "title:Trip to Lisbon"]);
      }
      // The producer's own clock (an hour before the write), and the big lines whole (zstd rows in 2026.9).
      expect(entries[0]!.ts).toBe(Date.parse("2026-12-01T07:00:00Z"));
      expect(entries[1]).toMatchObject({
        parts: [{ kind: "thinking", text: "Need the weather tool." }],
        toolCalls: [{ id: "call_w1", name: "weather", arguments: { city: "Lisbon" } }],
      });
      expect(entries[2]!.type === "message" && entries[2]!.content.length).toBeGreaterThan(1024);
      expect(shape(await t.store().readEntries((await t.store().getSession("discord:c42"))!.id))).toEqual([
        "user:deploy?",
        "assistant:deployed",
      ]);
      expect(await t.store().getSession("work:discord:dm:u777")).toMatchObject({ agent: "work" });
    });
  },
);
