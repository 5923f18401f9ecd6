import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { importSessions } from "../../src/import/importer.js";
import { readSource } from "../../src/import/read-source.js";
import type { ImportSource } from "../../src/import/types.js";
import type { Entry } from "../../src/model/entry.js";
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";
import { writeCrabtalk, writeNanobot, writeOpenclaw, writePicoclaw, writeZeroclaw } from "./fixtures.js";

const text = (entries: Entry[]) =>
  entries.map((e) => (e.type === "message" ? `${e.role}:${e.content}` : e.type));

describe("sessiond import", () => {
  let dir: string;
  let store: Store;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-import-"));
    store = new SqliteStore({ path: join(dir, "sessiond.db") });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function importTwice(source: ImportSource, path: string) {
    const first = await importSessions(store, source, readSource(source, path));
    const second = await importSessions(store, source, readSource(source, path));
    expect(second.imported).toEqual({ sessions: 0, entries: 0 });
    expect(second.alreadyThere).toBe(first.imported.sessions);
    return first;
  }

  it("crabtalk: generations in seq order, compact markers as compactions, bad and torn lines reported", async () => {
    const src = join(dir, "crabtalk");
    writeCrabtalk(src);
    const report = await importTwice("crabtalk", src);
    expect(report.imported).toEqual({ sessions: 2, entries: 8 });
    expect(report.problems).toEqual([
      { file: join(src, "crab_tg-user-123_2_lisbon-trip.jsonl"), line: 6, reason: "not JSON" },
      {
        file: join(src, "crab_tg-user-123_2_lisbon-trip.jsonl"),
        line: 8,
        reason: expect.stringMatching(/^torn last line \(\d+ bytes, no newline\) left out$/),
      },
    ]);
    const gens = await store.generations("crab:TG:user-123");
    expect(gens.map((g) => [g.generation, g.state, g.title])).toEqual([
      [2, "active", "Lisbon trip"],
      [1, "archived", ""],
    ]);
    expect(gens[1]!.createdAt).toBe(Date.parse("2026-03-01T10:00:00Z"));
    const context = (await store.loadContext("crab:TG:user-123"))!;
    expect(context.summary).toMatchObject({
      summary: "The user plans a trip; destination asked.",
      summarizer: "crabtalk",
    });
    expect(text(context.entries)).toEqual(["user:Lisbon", "assistant:Lisbon it is"]);
  });

  it("zeroclaw: JSONL per key and sessions.db; tool calls kept per §7, tool results left out", async () => {
    const src = join(dir, "zeroclaw");
    writeZeroclaw(src);
    const report = await importTwice("zeroclaw", src);
    expect(report.problems).toEqual([
      { file: join(src, "memory", "sessions.db"), row: "session_messages 6", reason: 'unknown role "robot"' },
    ]);
    expect(report.toolResultsDropped).toBe(1);
    const alice = (await store.loadContext("telegram:alice"))!;
    expect(alice.session).toMatchObject({ channel: "telegram", createdBy: "alice", agent: "main" });
    const call = alice.entries[1]!;
    expect(call.type === "message" && call.toolCalls).toEqual([
      { id: "c1", name: "reminder", arguments: { at: "17:00" } },
    ]);
    expect(JSON.stringify(alice.entries)).not.toContain("sk-live");
    const bob = await store.generations("discord:bob");
    expect(bob.map((g) => g.state)).toEqual(["active", "archived"]);
    expect(text(await store.readEntries(bob[1]!.id))).toEqual([
      "user:first week",
      "assistant:noted",
      "reset",
    ]);
    const context = (await store.loadContext("discord:bob"))!;
    expect(context.summary).toMatchObject({
      summary: "Summary: counting so far.",
      throughSeq: 2,
      firstKeptSeq: 3,
    });
    expect(text(context.entries)).toEqual(["user:three"]);
  });

  it("openclaw: sessions.json + transcripts and a per-agent SQLite file, keys mapped to sessiond's scopes", async () => {
    const src = join(dir, "openclaw");
    writeOpenclaw(src);
    const report = await importTwice("openclaw", src);
    const transcript = join(src, "agents", "main", "sessions", "0b6e-s1.jsonl");
    expect(report.problems).toEqual([
      { file: transcript, line: 6, reason: "not JSON" },
      {
        file: join(src, "agents", "main", "sessions", "sessions.json"),
        reason: 'entry "agent:main:telegram:direct:43" names a transcript outside its directory',
      },
      {
        file: join(src, "agents", "ops", "sessions.sqlite"),
        row: "transcript_events g55/3",
        reason: "event_json is not JSON",
      },
    ]);
    expect(report.toolResultsDropped).toBe(1);
    const dm = (await store.loadContext("telegram:42"))!;
    expect(dm.session).toMatchObject({ agent: "main", channel: "telegram", createdBy: "42" });
    expect(dm.summary).toMatchObject({ summary: "Ann logged in.", firstKeptSeq: 3, tokensBefore: 30 });
    expect(text(dm.entries)).toEqual(["user:thanks", "assistant:you're welcome"]);
    const all = await store.readEntries(dm.session.id);
    expect(all[1]).toMatchObject({
      content: "logging in",
      toolCalls: [{ id: "t1", name: "login", arguments: { user: "ann" } }],
    });
    const group = (await store.loadContext("ops:discord:55"))!;
    expect(group.session).toMatchObject({ agent: "ops", channel: "discord" });
    expect(text(group.entries)).toEqual(["user:deploy?", "assistant:deployed"]);
  });

  it("nanobot and picoclaw: keys from metadata, summaries with what they stand for", async () => {
    const nano = join(dir, "nanobot");
    writeNanobot(nano);
    const n = await importTwice("nanobot", nano);
    expect(n.problems).toEqual([
      { file: join(nano, "telegram_123.jsonl"), line: 6, reason: "unknown role 7" },
    ]);
    const weather = (await store.loadContext("telegram:123"))!;
    expect(text(weather.entries)).toEqual(["user:weather?", "assistant:", "assistant:It is -3C in Oslo."]);
    expect(weather.entries[0]!.ts).toBe(Date.parse("2026-01-05T08:00:00Z"));

    const pico = join(dir, "picoclaw");
    writePicoclaw(pico);
    await importTwice("picoclaw", pico);
    const u9 = (await store.loadContext("slack:u9"))!;
    expect(u9.summary).toMatchObject({
      summary: "a and b were said.",
      fromSeq: 1,
      throughSeq: 2,
      firstKeptSeq: 3,
    });
    expect(text(u9.entries)).toEqual(["user:c", "assistant:d"]);
    const u10 = (await store.loadContext("slack:u10"))!;
    expect(u10.summary).toMatchObject({ summary: "Earlier: greetings." });
    expect(text(u10.entries)).toEqual(["user:after"]);
  });

  it("reports a database file that is not one, or not the system's, and still brings in the rest", async () => {
    const src = join(dir, "zc");
    writeZeroclaw(src);
    writeFileSync(join(src, "sessions.db"), "not a database at all");
    const other = join(dir, "oc");
    mkdirSync(other);
    new Database(join(other, "main.sqlite")).exec("CREATE TABLE unrelated (x)").close();
    const zc = await importSessions(store, "zeroclaw", readSource("zeroclaw", src));
    expect(zc.problems.map((p) => [p.file, p.reason.split(":")[0]])).toContainEqual([
      join(src, "sessions.db"),
      "not a readable SQLite database",
    ]);
    expect(zc.imported.sessions).toBe(3);
    const oc = await importSessions(store, "openclaw", readSource("openclaw", other));
    expect(oc.problems).toEqual([
      {
        file: join(other, "main.sqlite"),
        reason: "no sessions / transcript_events tables: not an OpenClaw session database",
      },
    ]);
  });

  it("dry run reports what would come in and writes nothing; a key already in use is left alone", async () => {
    const src = join(dir, "nanobot");
    writeNanobot(src);
    const dry = await importSessions(store, "nanobot", readSource("nanobot", src), { dryRun: true });
    expect(dry.imported).toEqual({ sessions: 1, entries: 3 });
    expect(await store.getSession("telegram:123")).toBeUndefined();
    await store.append("telegram:123", [{ type: "message", role: "user", content: "live" }], {
      agent: "main",
      channel: "telegram",
      createdBy: "123",
    });
    const real = await importSessions(store, "nanobot", readSource("nanobot", src));
    expect(real.imported.sessions).toBe(0);
    expect(real.problems.at(-1)?.reason).toContain("already has a current session");
    expect((await store.getSession("telegram:123"))!.entryCount).toBe(1);
  });

  it("imports into the JSONL store too, and a file written there reads back as CrabTalk's", async () => {
    await store.close();
    store = new JsonlStore({ path: join(dir, "jsonl"), onProblem: () => undefined });
    const src = join(dir, "crabtalk");
    writeCrabtalk(src);
    const progress: Array<[number, number]> = [];
    const report = await importSessions(store, "crabtalk", readSource("crabtalk", src), {
      onProgress: (done, total) => progress.push([done, total]),
    });
    expect(report.imported.sessions).toBe(2);
    expect(progress.at(-1)).toEqual([2, 2]);
    // The round trip: the JSONL store's own directory, read as CrabTalk's, into a SQLite store.
    const copy = new SqliteStore({ path: join(dir, "copy.db") });
    try {
      const back = await importSessions(copy, "crabtalk", readSource("crabtalk", join(dir, "jsonl")));
      expect(back.problems).toEqual([]);
      expect(back.imported.sessions).toBe(2);
      const [a, b] = [
        (await store.loadContext("crab:TG:user-123"))!,
        (await copy.loadContext("crab:TG:user-123"))!,
      ];
      expect(text(b.entries)).toEqual(text(a.entries));
      expect(b.summary?.summary).toBe(a.summary?.summary);
      expect(b.session).toMatchObject({
        title: a.session.title,
        messageCount: a.session.messageCount,
        generation: 2,
      });
    } finally {
      await copy.close();
    }
  });
});
