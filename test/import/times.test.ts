import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { importSessions } from "../../src/import/importer.js";
import { readSource } from "../../src/import/read-source.js";
import type { ImportSource } from "../../src/import/types.js";
import { gunzipAll, useImportDir } from "./helpers.js";

// Times come from the peer's own records, never go back within a session, and a summary or a title sits
// where its time falls; a session starts when the peer says it did.
const t = useImportDir();

const FIXTURES: Array<[ImportSource, string]> = [
  ["crabtalk", "crabtalk"],
  ["zeroclaw", "zeroclaw"],
  ["openclaw", "openclaw-2026.7"],
  ["openclaw", "openclaw-2026.9"],
  ["openclaw", "openclaw-real-2026.7"],
  ["openclaw", "openclaw-real-2026.9"],
  ["nanobot", "nanobot"],
  ["picoclaw", "picoclaw"],
];

describe("imported times", () => {
  it.each(FIXTURES)("%s (%s): every session's entries are in time order", async (source, fixture) => {
    const src = t.fixture(fixture);
    gunzipAll(src);
    await importSessions(t.store(), source, readSource(source, src));
    const sessions = (await t.store().listSessions({ includeArchived: true })).sessions;
    expect(sessions.length).toBeGreaterThan(0);
    for (const session of sessions) {
      // The reset entry closing an archived generation carries the import's time (the store sets it).
      const times = (await t.store().readEntries(session.id))
        .filter((e) => e.type !== "reset")
        .map((e) => e.ts);
      expect(times, session.key).toEqual([...times].sort((a, b) => a - b));
      expect(session.createdAt, session.key).toBeLessThanOrEqual(times[0] ?? Number.POSITIVE_INFINITY);
    }
  });

  it("CrabTalk: messages after a compact marker never go back before it", async () => {
    const src = t.fixture("crabtalk");
    await importSessions(t.store(), "crabtalk", readSource("crabtalk", src));
    const [, first] = await t.store().generations("telegram:12345");
    const entries = await t.store().readEntries(first!.id);
    const marker = entries.findIndex((e) => e.type === "compaction");
    expect(entries[marker]!.ts).toBe(Date.parse("2026-11-30T08:42:05.100Z"));
    // "try tomorrow" was written after the marker: CrabTalk's last-persist time (08:40) is before it.
    expect(entries[marker + 1]).toMatchObject({ content: "try tomorrow", ts: entries[marker]!.ts });
  });

  it("a session starts at the peer's own start time when it is before the first message", async () => {
    const src = t.fixture("zeroclaw");
    const db = new Database(join(src, "sessions", "sessions.db"));
    db.prepare(
      "UPDATE session_metadata SET created_at = '2026-12-01T09:59:00+00:00' WHERE session_key = 'discord_clamps_d900_bob'",
    ).run();
    db.close();
    await importSessions(t.store(), "zeroclaw", readSource("zeroclaw", src));
    const session = (await t.store().listSessions({})).sessions.find((s) => s.createdBy === "bob");
    expect(session?.createdAt).toBe(Date.parse("2026-12-01T09:59:00Z"));
    const oc = t.fixture("openclaw-2026.7");
    await importSessions(t.store(), "openclaw", readSource("openclaw", oc));
    // The transcript header's time: the same as the first message here.
    expect((await t.store().getSession("discord:c42"))?.createdAt).toBe(Date.parse("2026-11-30T10:00:00Z"));
  });
});
