import { describe, expect, it } from "vitest";
import type { Entry, Session } from "../../src/index.js";
import { cli, parseJson, seed, useTempDir } from "./helpers.js";

const tempDir = useTempDir();

interface ShowJson {
  session: Session;
  generations?: Session[];
  entries: Entry[];
}

async function seedWithReset(dir: string): Promise<void> {
  await seed(dir, async (engine) => {
    await engine.append("telegram:9", [
      { type: "message", role: "user", content: "first\nsecond line", sender: { id: "alice" } },
      { type: "message", role: "assistant", content: "hello alice" },
      { type: "title", title: "Greeting" },
      {
        type: "compaction",
        summary: "they said hello",
        fromSeq: 1,
        throughSeq: 2,
        firstKeptSeq: 3,
        tokensBefore: 50,
        tokensAfter: 5,
        summarizer: "test",
      },
    ]);
    await engine.reset("telegram:9", "manual");
    await engine.append("telegram:9", [
      { type: "message", role: "user", content: "after reset", sender: { id: "alice" } },
      { type: "note", text: "model timed out", level: "error", code: "TURN_FAILED" },
    ]);
  });
}

describe("sessiond sessions show", () => {
  it("prints the current session's facts and transcript", async () => {
    const dir = tempDir();
    await seedWithReset(dir);
    const result = await cli(dir, ["--data-dir", dir, "sessions", "show", "telegram:9"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^key +telegram:9$/m);
    expect(result.stdout).toMatch(/^session +\w{26} \(generation 2, active\)$/m);
    expect(result.stdout).toMatch(/^entries +2 \(1 message, ~\d+ tokens\)$/m);
    expect(result.stdout).toMatch(/^#1 \d{4}-\d\d-\d\d \d\d:\d\d:\d\d user\/alice: after reset$/m);
    expect(result.stdout).toMatch(/^#2 .* note \[error TURN_FAILED\]: model timed out$/m);
    // The archived generation stays out without --all.
    expect(result.stdout).not.toContain("hello alice");
  });

  it("includes archived generations with --all, showing compaction, title and reset entries", async () => {
    const dir = tempDir();
    await seedWithReset(dir);
    const result = await cli(dir, ["--data-dir", dir, "sessions", "show", "telegram:9", "--all"]);
    expect(result.code).toBe(0);
    const transcript = result.stdout.slice(result.stdout.indexOf("transcript"));
    const seqLines = transcript.split("\n").filter((l) => /^#\d/.test(l));
    expect(seqLines.map((l) => l.split(" ")[0])).toEqual(["#1", "#2", "#3", "#4", "#5", "#1", "#2"]);
    expect(transcript).toMatch(/^#1 .* user\/alice: first\n {4}second line$/m);
    expect(transcript).toMatch(/^#3 .* title: "Greeting"$/m);
    expect(transcript).toMatch(/^#4 .* compaction of #1–#2 \(50 → 5 tokens, by test\): they said hello$/m);
    expect(transcript).toMatch(/^#5 .* reset \(manual\)$/m);
    expect(transcript.indexOf("generation 1")).toBeLessThan(transcript.indexOf("generation 2"));
  });

  it("prints { session, generations, entries } with --json --all", async () => {
    const dir = tempDir();
    await seedWithReset(dir);
    const plain = parseJson<ShowJson>(
      (await cli(dir, ["--data-dir", dir, "sessions", "show", "telegram:9", "--json"])).stdout,
    );
    expect(plain.session).toMatchObject({ key: "telegram:9", generation: 2, state: "active" });
    expect(plain.generations).toBeUndefined();
    expect(plain.entries.map((e) => e.type)).toEqual(["message", "note"]);

    const all = parseJson<ShowJson>(
      (await cli(dir, ["--data-dir", dir, "sessions", "show", "telegram:9", "--json", "--all"])).stdout,
    );
    expect(all.session.generation).toBe(2);
    expect(all.generations?.map((g) => [g.generation, g.state])).toEqual([
      [1, "archived"],
      [2, "active"],
    ]);
    expect(all.entries.map((e) => e.type)).toEqual([
      "message",
      "message",
      "title",
      "compaction",
      "reset",
      "message",
      "note",
    ]);
    expect(all.entries[0]?.sessionId).toBe(all.generations?.[0]?.id);
  });

  it("shows only the newest entries with --limit", async () => {
    const dir = tempDir();
    await seedWithReset(dir);
    const result = await cli(dir, [
      "--data-dir",
      dir,
      "sessions",
      "show",
      "telegram:9",
      "--all",
      "--limit",
      "3",
    ]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("the last 3 of 7 entries");
    const seqLines = result.stdout.split("\n").filter((l) => /^#\d/.test(l));
    expect(seqLines.map((l) => l.split(" ")[0])).toEqual(["#5", "#1", "#2"]);
  });
});

describe("sessiond sessions append", () => {
  it("appends messages, creating the session, and prints what it stored: key, generation, seq, id", async () => {
    const dir = tempDir();
    const first = await cli(dir, ["--data-dir", dir, "sessions", "append", "telegram:5", "hello", "there"]);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(
      /^stored in telegram:5 \(generation 1\): seq 1, id [0-9A-HJKMNP-TV-Z]{26}\n$/,
    );
    const second = await cli(dir, [
      ...["--data-dir", dir, "sessions", "append", "telegram:5", "hi!"],
      ...["--role", "assistant", "--sender", "bot"],
    ]);
    expect(second.stdout).toMatch(/^stored in telegram:5 \(generation 1\): seq 2, id /);
    const shown = parseJson<ShowJson>(
      (await cli(dir, ["--data-dir", dir, "sessions", "show", "telegram:5", "--json"])).stdout,
    );
    expect(shown.session).toMatchObject({ channel: "telegram", createdBy: "5", messageCount: 2 });
    expect(shown.entries).toMatchObject([
      { seq: 1, type: "message", role: "user", content: "hello there" },
      { seq: 2, type: "message", role: "assistant", content: "hi!", sender: { id: "bot" } },
    ]);
  });

  it("rejects a role outside user|assistant|system", async () => {
    const dir = tempDir();
    const result = await cli(dir, ["--data-dir", dir, "sessions", "append", "k", "x", "--role", "tool"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("Allowed choices are user, assistant, system");
  });
});
