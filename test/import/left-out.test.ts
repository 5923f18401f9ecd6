import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { importSessions } from "../../src/import/importer.js";
import { readSource } from "../../src/import/read-source.js";
import type { ImportSource } from "../../src/import/types.js";
import { useImportDir } from "./helpers.js";

// Nothing the peer stored is dropped without a line in the report; the peer's own notices come in as the
// entries they are.
const t = useImportDir();

async function leftOut(source: ImportSource, fixture: string): Promise<string[]> {
  const src = t.fixture(fixture);
  const report = await importSessions(t.store(), source, readSource(source, src));
  return report.leftOut.map(
    (l) => `${l.file.slice(src.length + 1)}${l.line ? `:${l.line}` : ""}: ${l.reason}`,
  );
}

describe("import: what does not come in is said", () => {
  it("each peer's files and lines with no history, or read from elsewhere, have a line each", async () => {
    expect(await leftOut("zeroclaw", "zeroclaw")).toEqual([
      "sessions/telegram_555_carol.jsonl.migrated: ZeroClaw's copy of a JSONL file it moved into sessions.db: read from there",
      "sessions/telegram_555_carol.jsonl: already in sessions.db (jsonl_import_receipts): read from there",
    ]);
    expect(await leftOut("picoclaw", "picoclaw")).toEqual([
      "sessions/agent_main_slack_direct_u1.json.migrated: a legacy session PicoClaw already moved into its JSONL: read from there",
    ]);
    expect(await leftOut("crabtalk", "crabtalk")).toEqual([
      "sessions/crab_tg-12345_2_lisbon-trip.jsonl: 3 event lines (run timings, usage): no history; their times date the messages",
    ]);
    expect(await leftOut("nanobot", "nanobot")).toEqual([
      "sessions/3f2a9c0d8e7b6a5f4e3d2c1b0a998877/dGVsZWdyYW06MTIzNDU.jsonl:2: a provider_state line: the provider's state, not history",
    ]);
    expect(await leftOut("openclaw", "openclaw-2026.7")).toEqual([
      `${join("agents", "main", "sessions", "b3f1c2d4-live.jsonl")}:1: 2 lines off the active branch (abandoned branches, side entries; OpenClaw does not replay them)`,
      `${join("agents", "main", "sessions", "b3f1c2d4-live.jsonl")}:1: no history in 1 model_change (model and thinking-level changes, bookmarks, extension state)`,
    ]);
  });

  it("ZeroClaw's interruption notice comes in as the assistant message ZeroClaw keeps", async () => {
    const src = t.fixture("zeroclaw");
    await importSessions(t.store(), "zeroclaw", readSource("zeroclaw", src));
    const topic = (await t.store().loadContext("telegram:-100777:thread:42"))!;
    expect(topic.entries.at(-1)).toMatchObject({
      type: "message",
      role: "assistant",
      content: "[Session interrupted — not continuing this request]",
    });
  });
});
