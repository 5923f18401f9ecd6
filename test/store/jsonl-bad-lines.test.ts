import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Entry } from "../../src/model/entry.js";
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";
import type { LineProblem } from "../../src/store/jsonl/session-file.js";

const init = { agent: "main", channel: "telegram", createdBy: "u1" };
const texts = (entries: Entry[]) => entries.map((e) => (e.type === "message" ? e.content : e.type));

describe("JSONL store: bad lines never stop it", () => {
  let dir: string;
  let problems: LineProblem[];
  let file: string;
  let sessionId: string;
  const open = () => new JsonlStore({ path: dir, onProblem: (p) => problems.push(p) });
  const lines = () => readFileSync(join(dir, file), "utf8").split("\n").slice(0, -1);
  const rewrite = (edit: (lines: string[]) => string[]) =>
    writeFileSync(join(dir, file), `${edit(lines()).join("\n")}\n`);

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-jsonl-bad-"));
    problems = [];
    const store = open();
    const { session } = await store.append(
      "k",
      ["a", "b", "c"].map((content) => ({ type: "message" as const, role: "user" as const, content })),
      { init },
    );
    sessionId = session.id;
    await store.close();
    file = readdirSync(dir).find((n) => n.endsWith(".jsonl"))!;
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  /** Opens the directory, lists and reads it, appends once more and reads it all back after a reopen. */
  async function survives(): Promise<string[]> {
    let store = open();
    expect((await store.listSessions()).sessions.map((s) => s.key)).toEqual(["k"]);
    const { entries } = await store.append("k", [{ type: "message", role: "user", content: "next" }]);
    await store.close();
    store = open();
    const all = await store.readEntries(sessionId);
    expect(all.at(-1)?.id).toBe(entries[0]!.id);
    await store.close();
    return texts(all);
  }

  it("skips a compact line carrying a message's fields, and a line whose content is not a string", async () => {
    rewrite((l) => {
      const b = JSON.parse(l[2]!);
      const c = JSON.parse(l[3]!);
      return [
        l[0]!,
        l[1]!,
        JSON.stringify({ compact: "summary", role: "user", content: "b", seq: b.seq, id: b.id, ts: b.ts }),
        JSON.stringify({ ...c, content: { not: "a string" } }),
      ];
    });
    expect(await survives()).toEqual(["a", "next"]);
    expect(problems.slice(0, 2).map((p) => [p.file, p.line])).toEqual([
      [file, 3],
      [file, 4],
    ]);
    expect(problems[0]!.reason).toMatch(/fromSeq/);
    expect(problems[1]!.reason).toMatch(/content/);
  });

  it("rejects a seq outside the safe integer range or not an integer, and never numbers after it", async () => {
    rewrite((l) => {
      const c = JSON.parse(l[3]!);
      return [
        ...l,
        JSON.stringify({ ...c, seq: 2 ** 53, content: "huge" }),
        JSON.stringify({ ...c, seq: 4.5 }),
      ];
    });
    expect(await survives()).toEqual(["a", "b", "c", "next"]);
    expect(problems.slice(0, 2).map((p) => [p.line, p.reason])).toEqual([
      [5, "seq 9007199254740992 is not a positive safe integer; line skipped"],
      [6, "seq 4.5 is not a positive safe integer; line skipped"],
    ]);
  });

  it("never lets a stray line without sessiond's fields take a genuine entry's seq; the report points at the stray line", async () => {
    rewrite((l) => [l[0]!, l[1]!, JSON.stringify({ role: "user", content: "stray" }), l[2]!, l[3]!]);
    expect(await survives()).toEqual(["a", "b", "c", "next"]);
    expect(problems[0]).toEqual({
      file,
      line: 3,
      reason: "a line without sessiond's fields among sessiond's entries (seq 2 is taken); line skipped",
    });
  });

  it("reports invalid UTF-8 (replaced) and keeps the line", async () => {
    const bytes = readFileSync(join(dir, file));
    const at = bytes.indexOf('"b"') + 1;
    bytes[at] = 0xff;
    writeFileSync(join(dir, file), bytes);
    expect(await survives()).toEqual(["a", "\ufffd", "c", "next"]);
    expect(problems[0]).toEqual({ file, line: 3, reason: "invalid UTF-8, replaced with U+FFFD" });
  });

  it("a damaged metadata line hides no entry: the identity comes from the index, else the file name", async () => {
    rewrite((l) => ['{"agent":"main","created_by":', ...l.slice(1)]);
    // The index (written at the clean close) still knows the file: same key and id.
    expect(await survives()).toEqual(["a", "b", "c", "next"]);
    expect(problems[0]).toMatchObject({ file, line: 1, reason: expect.stringMatching(/index/) });
    // Without an index (a crash), the file's claim still says whose it is.
    rmSync(join(dir, ".sessiond", "index.json"));
    problems = [];
    let store = open();
    expect((await store.getSession("k"))?.entryCount).toBe(4);
    await store.close();
    expect(problems[0]).toMatchObject({ file, line: 1, reason: expect.stringMatching(/claim/) });
    // Without either: every open reports it again and still reads the entries.
    rmSync(join(dir, ".sessiond", "index.json"), { force: true });
    rmSync(join(dir, ".sessiond", "claims"), { recursive: true });
    mkdirSync(join(dir, ".sessiond", "claims"));
    problems = [];
    store = open();
    const [session] = (await store.listSessions()).sessions;
    expect(texts(await store.readEntries(session!.id))).toEqual(["a", "b", "c", "next"]);
    await store.close();
    expect(problems[0]).toMatchObject({ file, line: 1, reason: expect.stringMatching(/file name/) });
  });
});
