import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { importSessions } from "../../src/import/importer.js";
import { readSource } from "../../src/import/read-source.js";
import { IMPORT_SOURCES } from "../../src/import/types.js";
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { shape, useImportDir } from "./helpers.js";

const t = useImportDir();
const FIXTURE_OF = {
  crabtalk: "crabtalk",
  zeroclaw: "zeroclaw",
  openclaw: "openclaw-2026.7",
  nanobot: "nanobot",
  picoclaw: "picoclaw",
} as const;

describe("sessiond import", () => {
  it.each(IMPORT_SOURCES)(
    "%s: a dry run reports exactly what the real run then does, and writes nothing",
    async (source) => {
      const src = t.fixture(FIXTURE_OF[source]);
      const dry = await importSessions(t.store(), source, readSource(source, src), { dryRun: true });
      expect((await t.store().listSessions({ includeArchived: true })).sessions).toEqual([]);
      const real = await importSessions(t.store(), source, readSource(source, src));
      expect(real.imported.sessions).toBeGreaterThan(0);
      expect({ ...dry, dryRun: false }).toEqual(real);
    },
  );

  it("a key that already has a current session from elsewhere is left alone and reported", async () => {
    const src = t.fixture("nanobot-flat");
    await t.store().append("telegram:42", [{ type: "message", role: "user", content: "live" }], {
      init: {
        agent: "main",
        channel: "telegram",
        createdBy: "42",
      },
    });
    const report = await importSessions(t.store(), "nanobot", readSource("nanobot", src));
    expect(report.imported.sessions).toBe(0);
    expect(report.problems.at(-1)?.reason).toContain("already has a current session");
    expect((await t.store().getSession("telegram:42"))!.entryCount).toBe(1);
  });

  it("a database that is not one, or not the system's, is one problem; the rest still comes in", async () => {
    const src = t.fixture("zeroclaw");
    const notDb = join(t.dir(), "zc-bad");
    mkdirSync(notDb);
    writeFileSync(join(notDb, "sessions.db"), "not a database at all");
    const zc = await importSessions(t.store(), "zeroclaw", readSource("zeroclaw", notDb));
    expect(zc.problems.map((p) => [p.file, p.reason.split(":")[0]])).toEqual([
      [join(notDb, "sessions.db"), "not a readable SQLite database"],
    ]);
    const other = join(t.dir(), "oc", "agents", "main", "agent");
    mkdirSync(other, { recursive: true });
    new Database(join(other, "openclaw-agent.sqlite")).exec("CREATE TABLE unrelated (x)").close();
    const oc = await importSessions(t.store(), "openclaw", readSource("openclaw", join(t.dir(), "oc")));
    expect(oc.problems).toEqual([
      {
        file: join(other, "openclaw-agent.sqlite"),
        reason: "no session_nodes / transcript_events tables: not an OpenClaw agent database",
      },
    ]);
    expect((await importSessions(t.store(), "zeroclaw", readSource("zeroclaw", src))).imported.sessions).toBe(
      4,
    );
  });

  it("one bad field is a problem for that session, never an aborted import or STORE_UNAVAILABLE", async () => {
    const dir = join(t.dir(), "bad-fields", "sessions");
    mkdirSync(dir, { recursive: true });
    const meta = {
      agent: "crab",
      created_by: "tg:7",
      created_at: "2026-11-30T08:00:00+00:00",
      uptime_secs: 1,
    };
    writeFileSync(
      join(dir, "crab_tg-7_1.jsonl"),
      `${JSON.stringify({ ...meta, title: 5 })}\n${JSON.stringify({ role: "user", content: "one" })}\n`,
    );
    writeFileSync(
      join(dir, "main_8_1.jsonl"),
      `${JSON.stringify({ ...meta, agent: "main", created_by: "8", title: "", key: "slack:8", session_id: "01JD0000000000000000000009", generation: 1, channel: "slack", chat_type: {} })}\n` +
        `${JSON.stringify({ role: "user", content: "two", seq: 1, id: "01JD000000000000000000000A", ts: 1796119200000 })}\n`,
    );
    const report = await importSessions(
      t.store(),
      "crabtalk",
      readSource("crabtalk", join(t.dir(), "bad-fields")),
    );
    expect(report.problems.map((p) => p.reason)).toEqual([
      "metadata title is not a string (5); left out",
      "metadata chat_type is not a string ({}); left out",
    ]);
    expect(report.imported).toEqual({ sessions: 2, entries: 2 });
    expect(shape((await t.store().loadContext("telegram:7"))!.entries)).toEqual(["user:one"]);
    expect(shape((await t.store().loadContext("slack:8"))!.entries)).toEqual(["user:two"]);
  });

  it("imports into the JSONL store too, and its directory reads back as CrabTalk's", async () => {
    await t.store().close();
    const jsonl = new JsonlStore({ path: join(t.dir(), "jsonl"), onProblem: () => undefined });
    const copy = new SqliteStore({ path: join(t.dir(), "copy.db") });
    try {
      const src = t.fixture("nanobot");
      const progress: Array<[number, number]> = [];
      const report = await importSessions(jsonl, "nanobot", readSource("nanobot", src), {
        onProgress: (done, total) => progress.push([done, total]),
      });
      expect(report.imported.sessions).toBe(2);
      expect(progress.at(-1)).toEqual([2, 2]);
      await jsonl.flush();
      const back = await importSessions(copy, "crabtalk", readSource("crabtalk", join(t.dir(), "jsonl")));
      expect(back.problems).toEqual([]);
      const [a, b] = [
        (await jsonl.loadContext("telegram:12345"))!,
        (await copy.loadContext("telegram:12345"))!,
      ];
      expect(shape(b.entries)).toEqual(shape(a.entries));
      expect(b.summary?.summary).toBe(a.summary?.summary);
      expect(b.session).toMatchObject({ title: a.session.title, messageCount: a.session.messageCount });
    } finally {
      await jsonl.close();
      await copy.close();
    }
  });
});
