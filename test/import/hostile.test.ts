import { execFileSync, execSync } from "node:child_process";
import { appendFileSync, mkdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { importSessions } from "../../src/import/importer.js";
import { readSource } from "../../src/import/read-source.js";
import type { Store } from "../../src/store/store.js";
import { FIXTURES, useImportDir } from "./helpers.js";
import { importInChild } from "./hostile/child.js";

// A folder a user hands over to be imported: each hostile file is one problem with its path, never
// followed out of the folder, never a hang, never memory beyond the caps; the rest still comes in.
const t = useImportDir();

async function contents(store: Store): Promise<string[]> {
  const out: string[] = [];
  for (const s of (await store.listSessions({ includeArchived: true })).sessions)
    for (const e of await store.readEntries(s.id)) if (e.type === "message") out.push(e.content);
  return out;
}

const MiB = 1024 * 1024;

/** The problems a report has beyond those the untouched fixture already gives (its own damaged lines). */
function added<T extends { file: string; reason: string }>(
  source: Parameters<typeof readSource>[0],
  fixture: string,
  problems: readonly T[] | undefined,
): T[] {
  const known = new Set(
    readSource(source, join(FIXTURES, fixture)).problems.map(
      (p) => `${p.file.slice(FIXTURES.length)}|${p.reason}`,
    ),
  );
  return (problems ?? []).filter(
    (p) => !known.has(`${p.file.slice(p.file.indexOf(fixture) - 1)}|${p.reason}`),
  );
}

describe("import from a hostile folder", () => {
  it("a transcript symlinked out of the folder is not followed; one symlinked inside is", async () => {
    const src = t.fixture("openclaw-2026.7");
    const sessions = join(src, "agents", "main", "sessions");
    // Outside: a copy of e5f6-main's transcript; its place in the folder is a symlink to it.
    renameSync(join(sessions, "e5f6-main.jsonl"), join(t.dir(), "outside.jsonl"));
    symlinkSync(join(t.dir(), "outside.jsonl"), join(sessions, "e5f6-main.jsonl"));
    // Inside: the channel transcript moved to a sub folder and linked back.
    mkdirSync(join(src, "kept"));
    renameSync(join(sessions, "d4e5-channel.jsonl"), join(src, "kept", "d4e5.jsonl"));
    symlinkSync(join("..", "..", "..", "kept", "d4e5.jsonl"), join(sessions, "d4e5-channel.jsonl"));
    const report = await importSessions(t.store(), "openclaw", readSource("openclaw", src));
    expect(added("openclaw", "openclaw-2026.7", report.problems)).toEqual([
      {
        file: join(sessions, "e5f6-main.jsonl"),
        reason: `a symlink to ${join(t.dir(), "outside.jsonl")}, outside the source folder; not followed`,
      },
    ]);
    const all = await contents(t.store());
    expect(all).not.toContain("ping");
    expect(all).toContain("deploy?");
  });

  it("a sessions folder symlinked out of the folder is not followed; one symlinked inside is", async () => {
    const out = t.fixture("nanobot-flat");
    renameSync(join(out, "sessions"), join(t.dir(), "elsewhere"));
    symlinkSync(join(t.dir(), "elsewhere"), join(out, "sessions"));
    const report = await importSessions(t.store(), "nanobot", readSource("nanobot", out));
    expect(report.problems).toEqual([
      {
        file: join(out, "sessions"),
        reason: `a symlink to ${join(t.dir(), "elsewhere")}, outside the source folder; not followed`,
      },
    ]);
    expect(report.read).toBe(0);
    const inside = join(t.dir(), "inside");
    mkdirSync(join(inside, "kept"), { recursive: true });
    renameSync(join(t.dir(), "elsewhere"), join(inside, "kept", "real"));
    symlinkSync(join("kept", "real"), join(inside, "sessions"));
    const again = await importSessions(t.store(), "nanobot", readSource("nanobot", inside));
    expect(again.problems).toEqual([]);
    expect(again.imported.sessions).toBe(1);
  });

  it("a FIFO in place of a transcript, a meta file or a session file is skipped with a problem; nothing hangs", () => {
    const oc = t.fixture("openclaw-2026.7");
    const sessions = join(oc, "agents", "main", "sessions");
    rmSync(join(sessions, "e5f6-main.jsonl"));
    execFileSync("mkfifo", [join(sessions, "e5f6-main.jsonl")]);
    const run = importInChild("openclaw", oc, join(t.dir(), "oc.db"));
    expect(run.failure).toBeUndefined();
    expect(added("openclaw", "openclaw-2026.7", run.report?.problems)).toEqual([
      { file: join(sessions, "e5f6-main.jsonl"), reason: "a FIFO, not a regular file; skipped" },
    ]);
    expect(run.report?.imported.sessions).toBeGreaterThan(2);

    const pico = t.fixture("picoclaw");
    const meta = join(
      pico,
      "sessions",
      "sk_v1_ce584b278399dd91864530bddf3c07fb92b6ef99dec4b3956e32e6980ac3c334.meta.json",
    );
    rmSync(meta);
    execFileSync("mkfifo", [meta]);
    execFileSync("mkfifo", [join(pico, "sessions", "agent_main_x.jsonl")]);
    const p = importInChild("picoclaw", pico, join(t.dir(), "pico.db"));
    expect(p.failure).toBeUndefined();
    expect(added("picoclaw", "picoclaw", p.report?.problems).map((x) => [x.file, x.reason])).toEqual([
      [join(pico, "sessions", "agent_main_x.jsonl"), "a FIFO, not a regular file; skipped"],
      [meta, "a FIFO, not a regular file; skipped"],
    ]);
  });

  it("a transcript symlinked to /dev/zero is one problem, and the import's memory stays small", () => {
    const src = t.fixture("nanobot-flat");
    symlinkSync("/dev/zero", join(src, "sessions", "telegram_7.jsonl"));
    const run = importInChild("nanobot", src, join(t.dir(), "n.db"));
    expect(run.failure).toBeUndefined();
    expect(added("nanobot", "nanobot-flat", run.report?.problems)).toEqual([
      {
        file: join(src, "sessions", "telegram_7.jsonl"),
        reason: "a symlink to /dev/zero, outside the source folder; not followed",
      },
    ]);
    expect(run.report?.imported.sessions).toBe(1);
    expect(run.maxRssBytes).toBeLessThan(400 * MiB);
  });

  it("zstd bombs: a row that expands past the cap is stopped there, whatever its event_utf8_bytes says", () => {
    const src = t.fixture("openclaw-2026.9");
    const dbFile = join(src, "agents", "main", "agent", "openclaw-agent.sqlite");
    // A 200 MB JSON line of a user message, zstd-compressed to a few KB, streamed (no content size).
    const size = 200 * MiB;
    const head =
      '{"type":"message","id":"bomb","parentId":"g1-2","timestamp":"2026-11-30T09:01:00.000Z","message":{"role":"user","content":"';
    const frame = execSync(
      `{ printf '%s' '${head}'; head -c ${size} /dev/zero | tr '\\0' a; printf '"}}'; } | zstd -1 -c`,
      { maxBuffer: 64 * MiB },
    );
    expect(frame.length).toBeLessThan(64 * 1024);
    const lineBytes = head.length + size + 3;
    const db = new Database(dbFile);
    const insert = db.prepare(
      "INSERT INTO transcript_events (session_id, seq, event_json, event_zstd, event_utf8_bytes, navigation_json, created_at) VALUES ('g1', ?, NULL, ?, ?, '{}', 0)",
    );
    insert.run(10, frame, lineBytes); // the truth
    insert.run(11, frame, 9000); // a lie: a small size on a huge frame
    db.close();
    const run = importInChild("openclaw", src, join(t.dir(), "oc.db"));
    expect(run.failure).toBeUndefined();
    const problems = added("openclaw", "openclaw-2026.9", run.report?.problems);
    expect(problems).toEqual([
      {
        file: dbFile,
        row: "transcript_events g1/10",
        reason: "event_zstd does not decode: event_utf8_bytes says 200 MiB, over the cap of 16 MiB",
      },
      {
        file: dbFile,
        row: "transcript_events g1/11",
        reason: `event_zstd does not decode: decompresses to more than ${16 * MiB} bytes (the cap); stopped there`,
      },
    ]);
    expect(run.report?.summary.messages).toBe(10);
    expect(run.maxRssBytes).toBeLessThan(400 * MiB);
  });

  it("JSON bombs (deep nesting) are refused line by line; the rest of the file comes in", async () => {
    const deep = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;
    const nb = t.fixture("nanobot-flat");
    const file = join(nb, "sessions", "telegram_42.jsonl");
    appendFileSync(
      file,
      `${JSON.stringify({ role: "assistant", content: "calling", tool_calls: [{ id: "c1", function: { name: "f", arguments: "__" } }] }).replace('"__"', deep(200_000))}\n` +
        `${JSON.stringify({ role: "user", content: "after the bomb" })}\n`,
    );
    const report = await importSessions(t.store(), "nanobot", readSource("nanobot", nb));
    expect(added("nanobot", "nanobot-flat", report.problems)).toEqual([
      { file, line: 4, reason: "JSON nested deeper than 128 levels" },
    ]);
    expect(await contents(t.store())).toContain("after the bomb");

    const ct = t.fixture("crabtalk");
    const ctFile = join(ct, "sessions", "crab_user_1.jsonl");
    appendFileSync(
      ctFile,
      `{"role":"user","content":${deep(200_000)}}\n{"role":"user","content":"still here"}\n`,
    );
    const ctReport = await importSessions(t.store(), "crabtalk", readSource("crabtalk", ct));
    expect(added("crabtalk", "crabtalk", ctReport.problems).map((p) => [p.file, p.reason])).toEqual([
      [ctFile, "JSON nested deeper than 128 levels; left out"],
    ]);
    expect(await contents(t.store())).toContain("still here");
  });

  it("a file over the size cap and a line over the line cap are one problem each", async () => {
    const src = t.fixture("nanobot-flat");
    const file = join(src, "sessions", "telegram_42.jsonl");
    appendFileSync(file, `${JSON.stringify({ role: "user", content: "x".repeat(5000) })}\n`);
    writeFileSync(join(src, "sessions", "telegram_9.jsonl"), "y".repeat(20_000));
    const report = await importSessions(
      t.store(),
      "nanobot",
      readSource("nanobot", src, { limits: { lineBytes: 4096, fileBytes: 16_384 } }),
    );
    expect(added("nanobot", "nanobot-flat", report.problems)).toEqual([
      { file, line: 4, reason: "5028 characters, over the cap of 4096" },
      {
        file: join(src, "sessions", "telegram_9.jsonl"),
        reason: "20 KiB, over the cap of 16 KiB for one file; skipped",
      },
    ]);
    expect(report.imported.sessions).toBe(1);
  });
});
