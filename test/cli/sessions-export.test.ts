import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { Entry, Session } from "../../src/index.js";
import { cli, parseJson, seed, useTempDir } from "./helpers.js";

const tempDir = useTempDir();
const KEY = "telegram:77";
const CREATED = Date.UTC(2026, 2, 14, 9, 0, 0);

async function seedSession(dir: string, options: { reset?: boolean } = {}): Promise<void> {
  await seed(dir, async (engine) => {
    await engine.append(
      KEY,
      [
        {
          type: "message",
          role: "user",
          content: "plan the trip",
          sender: { id: "u77", name: "Ann" },
          ts: CREATED,
        },
        { type: "message", role: "assistant", content: "Day 1: Lisbon", ts: CREATED + 1000 },
        { type: "title", title: "Trip plan", ts: CREATED + 2000 },
        {
          type: "compaction",
          summary: "Ann plans a trip.\nLisbon first.",
          fromSeq: 1,
          throughSeq: 2,
          firstKeptSeq: 3,
          tokensBefore: 40,
          tokensAfter: 8,
          summarizer: "test",
          ts: CREATED + 3000,
        },
        { type: "message", role: "user", content: "and day 2?", sender: { id: "u77" }, ts: CREATED + 90_000 },
      ],
      { init: { agent: "main", channel: "telegram", createdBy: "u77" } },
    );
    if (options.reset) {
      await engine.reset(KEY);
      await engine.append(KEY, [{ type: "message", role: "user", content: "new start" }]);
    }
  });
}

function exportArgs(dir: string, ...rest: string[]): string[] {
  return ["--data-dir", dir, "sessions", "export", KEY, ...rest];
}

describe("sessiond sessions export", () => {
  it("--format json: the stored session and entries", async () => {
    const dir = tempDir();
    await seedSession(dir);
    const result = await cli(dir, exportArgs(dir, "--format", "json"));
    expect(result.code).toBe(0);
    const doc = parseJson<{ session: Session; generations?: Session[]; entries: Entry[] }>(result.stdout);
    expect(doc.session).toMatchObject({ key: KEY, title: "Trip plan", messageCount: 3, entryCount: 5 });
    expect(doc.generations).toBeUndefined();
    expect(doc.entries.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(doc.entries[3]).toMatchObject({ type: "compaction", summary: "Ann plans a trip.\nLisbon first." });
  });

  it("--format jsonl: CrabTalk's metadata line, messages and compact markers", async () => {
    const dir = tempDir();
    await seedSession(dir);
    const result = await cli(dir, exportArgs(dir, "--format", "jsonl"));
    expect(result.code).toBe(0);
    expect(result.stdout.endsWith("\n")).toBe(true);
    const lines = result.stdout
      .trimEnd()
      .split("\n")
      .map((l) => parseJson<Record<string, unknown>>(l));
    expect(lines).toHaveLength(6);
    const [meta, ...rest] = lines;
    const { session } = parseJson<{ session: Session }>(
      (await cli(dir, exportArgs(dir, "--format", "json"))).stdout,
    );
    expect(meta).toEqual({
      agent: "main",
      // The file family's sender, distinct per key (CrabTalk looks files up by it); sessiond's sender beside it.
      created_by: expect.stringMatching(/^u77-[0-9a-f]{12}$/),
      sender: "u77",
      created_at: new Date(session.createdAt).toISOString(),
      title: "Trip plan",
      uptime_secs: Math.floor((session.lastActivityAt - session.createdAt) / 1000),
      key: KEY,
      session_id: session.id,
      generation: 1,
      channel: "telegram",
    });
    expect(rest[0]).toMatchObject({ role: "user", content: "plan the trip", seq: 1, ts: CREATED });
    expect(rest[0]?.id).toEqual(expect.any(String));
    expect(rest[0]).not.toHaveProperty("type");
    expect(rest[1]).toMatchObject({ role: "assistant", content: "Day 1: Lisbon", seq: 2 });
    expect(rest[2]).toMatchObject({ type: "title", title: "Trip plan", seq: 3 });
    expect(rest[3]).toMatchObject({
      compact: "Ann plans a trip.\nLisbon first.",
      seq: 4,
      fromSeq: 1,
      throughSeq: 2,
    });
    expect(rest[3]).not.toHaveProperty("role");
    expect(rest[4]).toMatchObject({ role: "user", content: "and day 2?", seq: 5 });
  });

  it("--format md: a readable transcript", async () => {
    const dir = tempDir();
    await seedSession(dir);
    const result = await cli(dir, exportArgs(dir, "--format", "md"));
    expect(result.code).toBe(0);
    const md = result.stdout;
    expect(md.startsWith("# Trip plan\n")).toBe(true);
    expect(md).toContain("- **Key:** `telegram:77`");
    expect(md).toContain("- **Messages:** 3 (5 entries)");
    expect(md).toContain("**user** (Ann) · 2026-03-14 09:00:00 UTC · #1\n\nplan the trip");
    expect(md).toContain("**assistant** · 2026-03-14 09:00:01 UTC · #2\n\nDay 1: Lisbon");
    expect(md).toMatch(/> \*\*Compacted #1–#2\*\* .*\n>\n> Ann plans a trip\.\n> Lisbon first\./);
    expect(md.indexOf("plan the trip")).toBeLessThan(md.indexOf("and day 2?"));
  });

  it("--all exports every generation; --output writes a file and picks the format from its name", async () => {
    const dir = tempDir();
    await seedSession(dir, { reset: true });
    const result = await cli(dir, exportArgs(dir, "--all", "--output", "out/../trip.jsonl"));
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("trip.jsonl");
    expect(readdirSync(dir).filter((f) => f.includes("trip"))).toEqual(["trip.jsonl"]);
    const lines = readFileSync(join(dir, "trip.jsonl"), "utf8")
      .trimEnd()
      .split("\n")
      .map((l) => parseJson<Record<string, unknown>>(l));
    const [meta, ...rest] = lines;
    expect(meta).toMatchObject({ key: KEY, generation: 2 });
    expect(meta?.generations).toHaveLength(2);
    expect(rest.map((l) => l.content ?? l.compact ?? l.type)).toEqual([
      "plan the trip",
      "Day 1: Lisbon",
      "title",
      "Ann plans a trip.\nLisbon first.",
      "and day 2?",
      "reset",
      "new start",
    ]);
    // Lines from different generations say which session they belong to.
    expect(new Set(rest.map((l) => l.sessionId)).size).toBe(2);

    const json = await cli(dir, exportArgs(dir, "--all", "--format", "json"));
    const doc = parseJson<{ generations?: Session[]; entries: Entry[] }>(json.stdout);
    expect(doc.generations?.map((g) => g.generation)).toEqual([1, 2]);
    expect(doc.entries).toHaveLength(7);
  });

  it("needs a format it knows", async () => {
    const dir = tempDir();
    await seedSession(dir);
    const xml = await cli(dir, exportArgs(dir, "--format", "xml"));
    expect(xml.code).toBe(2);
    expect(xml.stderr).toContain("Allowed choices are json, jsonl, md");
    const none = await cli(dir, exportArgs(dir));
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("--format");
    const unknownExtension = await cli(dir, exportArgs(dir, "--output", "trip.txt"));
    expect(unknownExtension.code).toBe(2);
    expect(readdirSync(dir)).not.toContain("trip.txt");
  });
});
