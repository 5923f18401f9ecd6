import { spawn, spawnSync } from "node:child_process";
import {
  appendFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Entry, EntryInput } from "../../src/model/entry.js";
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";
import type { LineProblem } from "../../src/store/jsonl/session-file.js";

const init = (createdBy = "u1", agent = "main") => ({ agent, channel: "telegram", createdBy });
const msg = (content: string, role: "user" | "assistant" = "user"): EntryInput => ({
  type: "message",
  role,
  content,
});
const line = (value: object) => `${JSON.stringify(value)}\n`;
/** A message entry's content; "" for other entries. */
const textOf = (e: Entry) => (e.type === "message" ? e.content : "");
const crabMeta = (agent: string, createdBy: string, title = "") =>
  line({ agent, created_by: createdBy, created_at: "2026-03-01T10:00:00Z", title, uptime_secs: 42 });
const jsonlFiles = (dir: string) =>
  readdirSync(dir)
    .filter((n) => n.endsWith(".jsonl"))
    .sort();

/** CrabTalk's loading rule, written from behaviours.md §2: messages after the last compact marker. */
function crabtalkContext(text: string): Array<{ role: string; content: string }> {
  let context: Array<{ role: string; content: string }> = [];
  for (const raw of text.split("\n").slice(1)) {
    let value: Record<string, unknown>;
    try {
      value = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      continue;
    }
    if (typeof value.compact === "string") context = [{ role: "user", content: value.compact }];
    else if (typeof value.role === "string" && typeof value.content === "string")
      context.push({ role: value.role, content: value.content });
  }
  return context;
}

describe("JSONL store files", () => {
  let dir: string;
  let problems: LineProblem[];
  const open = () => new JsonlStore({ path: dir, onProblem: (p) => problems.push(p) });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-jsonl-files-"));
    problems = [];
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("loads files CrabTalk wrote unchanged: context from the last marker, titled names, generations", async () => {
    const first =
      crabMeta("crab", "TG:user-123") +
      line({ role: "user", content: "hello" }) +
      line({ role: "assistant", content: "hi there" });
    const second =
      crabMeta("crab", "TG:user-123", "Hello world") +
      line({ role: "user", content: "plan a trip" }) +
      line({ compact: "They planned a trip to Lisbon." }) +
      line({ role: "user", content: "book it" }) +
      line({ role: "assistant", content: "booked" });
    writeFileSync(join(dir, "crab_tg-user-123_1.jsonl"), first);
    writeFileSync(join(dir, "crab_tg-user-123_2_hello-world.jsonl"), second);
    const store = open();
    const key = "crab:TG:user-123";
    const gens = await store.generations(key);
    expect(gens.map((g) => [g.generation, g.state, g.title])).toEqual([
      [2, "active", "Hello world"],
      [1, "archived", ""],
    ]);
    const context = (await store.loadContext(key))!;
    expect(context.summary).toMatchObject({
      summary: "They planned a trip to Lisbon.",
      seq: 2,
      firstKeptSeq: 3,
    });
    expect(context.entries.map((e) => (e.type === "message" ? e.content : e.type))).toEqual([
      "book it",
      "booked",
    ]);
    // Ids of lines that carry none are derived, so they stay the same across opens.
    const ids = (await store.readEntries(context.session.id)).map((e) => e.id);
    await store.close();
    const again = open();
    expect((await again.readEntries(context.session.id)).map((e) => e.id)).toEqual(ids);
    // Appending continues the same file and numbering; CrabTalk's lines are untouched.
    await again.append(key, [msg("one more")]);
    await again.close();
    const text = readFileSync(join(dir, "crab_tg-user-123_2_hello-world.jsonl"), "utf8");
    expect(text.startsWith(second)).toBe(true);
    expect(JSON.parse(text.trimEnd().split("\n").at(-1)!)).toMatchObject({
      role: "user",
      content: "one more",
      seq: 5,
    });
    expect(readFileSync(join(dir, "crab_tg-user-123_1.jsonl"), "utf8")).toBe(first);
    expect(problems).toEqual([]);
  });

  it("writes files that load by CrabTalk's rules to the same context sessiond loads", async () => {
    const store = open();
    await store.append("main:u1", [msg("m1"), msg("r1", "assistant"), msg("m2"), msg("r2", "assistant")], {
      init: init(),
    });
    await store.append("main:u1", [
      {
        type: "compaction",
        summary: "Earlier: m1 and r1.",
        fromSeq: 1,
        throughSeq: 2,
        firstKeptSeq: 3,
        tokensBefore: 10,
        tokensAfter: 5,
        summarizer: "offline",
      },
      msg("m3"),
      { type: "note", text: "not a message" },
    ]);
    const context = (await store.loadContext("main:u1"))!;
    await store.close();
    const [file] = jsonlFiles(dir);
    expect(file).toBe("main_u1_1.jsonl");
    const text = readFileSync(join(dir, file!), "utf8");
    const meta = JSON.parse(text.split("\n")[0]!) as Record<string, unknown>;
    expect(Object.keys(meta).slice(0, 5)).toEqual([
      "agent",
      "created_by",
      "created_at",
      "title",
      "uptime_secs",
    ]);
    const sessiondView = [
      { role: "user", content: context.summary!.summary },
      ...context.entries.flatMap((e) => (e.type === "message" ? [{ role: e.role, content: e.content }] : [])),
    ];
    expect(crabtalkContext(text)).toEqual(sessiondView);
    expect(sessiondView.map((m) => m.content)).toEqual(["Earlier: m1 and r1.", "m2", "r2", "m3"]);
  });

  it("cuts a torn last line back on open, keeping every complete line", async () => {
    let store = open();
    const { session } = await store.append("k:t", [msg("a"), msg("b")], { init: init() });
    await store.close();
    const path = join(dir, jsonlFiles(dir)[0]!);
    const intact = readFileSync(path, "utf8");
    appendFileSync(path, '{"role":"user","content":"half a li');
    store = open();
    expect((await store.readEntries(session.id)).map((e) => e.seq)).toEqual([1, 2]);
    expect(readFileSync(path, "utf8")).toBe(intact);
    await store.append("k:t", [msg("c")]);
    await store.close();
    store = open();
    expect((await store.readEntries(session.id)).map(textOf)).toEqual(["a", "b", "c"]);
    await store.close();
    // Reported when it is cut, and only then: the file holds no torn line afterwards.
    expect(problems).toEqual([
      { file: basename(path), line: 4, reason: "torn last line (35 bytes, no newline) left out" },
    ]);
  });

  it("replays the journal of a writer that is gone: acknowledged bytes a power cut lost come back", async () => {
    const writer = open();
    const { session } = await writer.append("main:u1", [msg("before")], { init: init() });
    // A title drains the journal into the file (fsync'd) before it rewrites line 1 and renames the file.
    await writer.append("main:u1", [{ type: "title", title: "Renamed later" }]);
    const synced = readFileSync(join(dir, jsonlFiles(dir)[0]!), "utf8");
    await writer.append("main:u1", [msg("acknowledged 1"), msg("acknowledged 2")]);
    // The power cut: the session file loses what was not fsync'd, the fsync'd journal survives; its
    // writer (this test's process would look alive) is given the pid of a process that has exited.
    const meta = join(dir, ".sessiond");
    const journal = readdirSync(meta).find((n) => n.startsWith(`journal-${process.pid}-`))!;
    const deadPid = spawnSync(process.execPath, ["-e", ""]).pid;
    writeFileSync(join(meta, `journal-${deadPid}-0badf00d.jsonl`), readFileSync(join(meta, journal)));
    const renamed = jsonlFiles(dir)[0]!;
    expect(renamed).toBe("main_u1_1_renamed-later.jsonl");
    writeFileSync(join(dir, renamed), `${synced}{"role":"user","cont`);
    const reader = open();
    expect(
      (await reader.readEntries(session.id)).map((e) => (e.type === "message" ? e.content : e.type)),
    ).toEqual(["before", "title", "acknowledged 1", "acknowledged 2"]);
    expect(readdirSync(meta).filter((n) => n.includes(String(deadPid)))).toEqual([]);
    await reader.close();
    expect(problems).toEqual([]);
  });

  it("keeps a complete last line that only lacks its newline", async () => {
    let store = open();
    const { session } = await store.append("k:n", [msg("a"), msg("b")], { init: init() });
    await store.close();
    const path = join(dir, jsonlFiles(dir)[0]!);
    writeFileSync(path, readFileSync(path, "utf8").replace(/\n$/, ""));
    store = open();
    await store.append("k:n", [msg("c")]);
    expect((await store.readEntries(session.id)).map((e) => e.seq)).toEqual([1, 2, 3]);
    await store.close();
  });

  it("reports a bad line in the middle with its file and line, and keeps it and everything around it", async () => {
    let store = open();
    const { session } = await store.append("k:c", [msg("a"), msg("b"), msg("c")], { init: init() });
    await store.close();
    const name = jsonlFiles(dir)[0]!;
    const path = join(dir, name);
    const lines = readFileSync(path, "utf8").split("\n");
    lines[2] = "{garbage";
    writeFileSync(path, lines.join("\n"));
    store = open();
    expect(problems).toEqual([
      { file: name, line: 3, reason: "not JSON" },
      { file: name, line: 4, reason: "entries 2..2 are missing" },
    ]);
    expect(store.problems).toHaveLength(2);
    expect((await store.readEntries(session.id)).map((e) => e.seq)).toEqual([1, 3]);
    // The next append continues after the highest seq; the bad line stays in the file for a human.
    expect((await store.append("k:c", [msg("d")])).entries[0]!.seq).toBe(4);
    await store.close();
    expect(readFileSync(path, "utf8")).toContain("{garbage\n");
  });

  it("renames the file with the title slug once titled, and keeps appending to it", async () => {
    let store = open();
    await store.append("crab:TG:user-123", [msg("hello")], { init: init("TG:user-123", "crab") });
    expect(jsonlFiles(dir)).toEqual(["crab_tg-user-123_1.jsonl"]);
    await store.append("crab:TG:user-123", [{ type: "title", title: "Planning the Trip!" }]);
    expect(jsonlFiles(dir)).toEqual(["crab_tg-user-123_1_planning-the-trip.jsonl"]);
    await store.append("crab:TG:user-123", [msg("after the title")]);
    await store.close();
    store = open();
    const session = (await store.getSession("crab:TG:user-123"))!;
    expect(session).toMatchObject({ title: "Planning the Trip!", entryCount: 3 });
    // A new generation never takes the titled file's seq; another key of the sender is another family.
    await store.reset("crab:TG:user-123", "manual");
    await store.append("k:other", [msg("x")], { init: init("TG:user-123", "crab") });
    expect(jsonlFiles(dir)).toEqual([
      "crab_tg-user-123-bc2dc5a25558_1.jsonl",
      "crab_tg-user-123_1_planning-the-trip.jsonl",
      "crab_tg-user-123_2.jsonl",
    ]);
    await store.close();
  });

  it("never lets two processes pick the same seq for one (agent, sender)", async () => {
    const count = 40;
    const children = ["a", "b"].map((tag) =>
      spawn(
        process.execPath,
        [
          "--import",
          "tsx",
          new URL("./jsonl-race-child.ts", import.meta.url).pathname,
          dir,
          tag,
          String(count),
        ],
        { stdio: ["pipe", "pipe", "pipe"] },
      ),
    );
    const outputs = children.map((child) => {
      let out = "";
      let err = "";
      child.stderr.on("data", (c: Buffer) => {
        err += c.toString();
      });
      const ready = new Promise<void>((resolve) =>
        child.stdout.on("data", (c: Buffer) => {
          out += c.toString();
          if (out.includes("ready")) resolve();
        }),
      );
      const exit = new Promise<string>((resolve, reject) =>
        child.on("exit", (code) => (code === 0 ? resolve(out) : reject(new Error(`child failed: ${err}`)))),
      );
      return { ready, exit };
    });
    await Promise.all(outputs.map((o) => o.ready));
    for (const child of children) child.stdin.end("go\n");
    for (const out of await Promise.all(outputs.map((o) => o.exit))) expect(out).toContain(`done ${count}`);
    const files = jsonlFiles(dir);
    expect(files).toHaveLength(2 * count);
    const seqs = files.map((f) => Number(/_(\d+)\.jsonl$/.exec(f)![1]));
    expect(new Set(seqs).size).toBe(2 * count);
    expect(files.every((f) => f.startsWith("crab_tg-user-123_"))).toBe(true);
    const store = open();
    for (const tag of ["a", "b"]) {
      for (let i = 0; i < count; i++) {
        const key = `crab:TG:user-123${(tag === "a" ? "!" : "?").repeat(i + 1)}`;
        const context = (await store.loadContext(key))!;
        expect(context.entries.map(textOf)).toEqual([`${tag} ${i}`]);
      }
    }
    await store.close();
    expect(problems).toEqual([]);
  });

  it("numbers after entries another process appended to a session since (one writer at a time)", async () => {
    const gateway = open();
    const { session } = await gateway.append("k:shared", [msg("a")], { init: init() });
    // The CLI, in another process, appends to the same session while the gateway is idle.
    const cli = open();
    await cli.append("k:shared", [msg("b")]);
    await cli.close();
    const after = await gateway.append("k:shared", [msg("c")]);
    expect(after.entries[0]!.seq).toBe(3);
    expect(after.session.entryCount).toBe(3);
    await gateway.close();
    const reader = open();
    expect((await reader.readEntries(session.id)).map(textOf)).toEqual(["a", "b", "c"]);
    await reader.close();
    expect(problems).toEqual([]);
  });

  it("notices a line another program appended between two of its own appends, once it had checked the file", async () => {
    const store = open();
    const { session } = await store.append("k:watched", [msg("a")], { init: init() });
    // This append compares the file with what the store wrote (they match); later ones rely on the
    // directory's change events until another program writes.
    await store.append("k:watched", [msg("b")]);
    await store.append("k:watched", [msg("c")]);
    const path = join(dir, jsonlFiles(dir)[0]!);
    const crabtalk = spawnSync(process.execPath, [
      "-e",
      `require("node:fs").appendFileSync(${JSON.stringify(path)}, ${JSON.stringify(line({ role: "user", content: "from crabtalk" }))})`,
    ]);
    expect(crabtalk.status).toBe(0);
    const after = await store.append("k:watched", [msg("d")]);
    expect(after.entries[0]!.seq).toBe(5);
    expect((await store.readEntries(session.id)).map(textOf)).toEqual(["a", "b", "c", "from crabtalk", "d"]);
    await store.close();
    expect(crabtalkContext(readFileSync(path, "utf8")).map((m) => m.content)).toEqual([
      "a",
      "b",
      "c",
      "from crabtalk",
      "d",
    ]);
    expect(problems).toEqual([]);
  });

  it("reads the entries an earlier operation of the same batch queued when an append needs the session's entries", async () => {
    const store = open();
    await store.append("k:old", [msg("a")], { init: init() });
    const keyed = (content: string, idempotencyKey: string): EntryInput => ({
      ...msg(content),
      idempotencyKey,
    });
    // One batch: plain appends (which read no entries) before appends whose keys must be looked up, to a
    // session made in an earlier batch and to one made in this one.
    const [, c, , y, yAgain] = await Promise.all([
      store.append("k:old", [msg("b")]),
      store.append("k:old", [keyed("c", "c-1")]),
      store.append("k:new", [msg("x")], { init: init("u2") }),
      store.append("k:new", [keyed("y", "y-1")]),
      store.append("k:new", [keyed("y again", "y-1")]),
    ]);
    expect(c.entries[0]!.seq).toBe(3);
    expect(y.entries[0]!.seq).toBe(2);
    expect(yAgain.created).toEqual([false]);
    expect(yAgain.entries[0]!.id).toBe(y.entries[0]!.id);
    const contents = async (key: string) => (await store.loadContext(key))!.entries.map(textOf);
    expect(await contents("k:old")).toEqual(["a", "b", "c"]);
    expect(await contents("k:new")).toEqual(["x", "y"]);
    await store.close();
    const reader = open();
    expect((await reader.getSession("k:new"))!.entryCount).toBe(2);
    await reader.close();
    expect(problems).toEqual([]);
  });

  it("reads its file again when the file is shorter than this process wrote it", async () => {
    const store = open();
    const { session } = await store.append("k:cut", [msg("a")], { init: init() });
    await store.append("k:cut", [msg("b")]);
    const path = join(dir, jsonlFiles(dir)[0]!);
    // Another process cut the last line off (as a repair of a torn tail would).
    const lines = readFileSync(path, "utf8").split("\n");
    writeFileSync(path, `${lines.slice(0, -2).join("\n")}\n`);
    const after = await store.append("k:cut", [msg("c")]);
    expect(after.entries[0]!.seq).toBe(2);
    expect((await store.readEntries(session.id)).map(textOf)).toEqual(["a", "c"]);
    await store.close();
    expect(problems).toEqual([]);
  });

  it("reads what a busy store acknowledged even before its files hold it, and the files catch up once it is idle", async () => {
    const store = new JsonlStore({ path: dir, cacheSize: 1, onProblem: (p) => problems.push(p) });
    const keys = Array.from({ length: 20 }, (_, i) => `k:busy:${i}`);
    await Promise.all(keys.map((key, i) => store.append(key, [msg(`${key} 0`)], { init: init(`u${i}`) })));
    for (let round = 1; round <= 5; round++)
      await Promise.all(keys.map((key) => store.append(key, [msg(`${key} ${round}`)])));
    // Right away, in this turn: each session is read from its file (a cache of one session).
    for (const key of keys) {
      const context = (await store.loadContext(key))!;
      expect(context.entries.map(textOf)).toEqual([0, 1, 2, 3, 4, 5].map((round) => `${key} ${round}`));
    }
    await Promise.all(keys.map((key) => store.append(key, [msg(`${key} 6`)])));
    await new Promise((resolve) => setImmediate(resolve));
    // Idle now: another reader of the directory sees every acknowledged entry in the files.
    const reader = open();
    for (const key of keys) expect((await reader.getSession(key))!.entryCount).toBe(7);
    await reader.close();
    await store.close();
    expect(problems).toEqual([]);
  });

  it("names no file outside the directory, whatever the agent, sender, key or id", async () => {
    const outside = join(dir, "outside");
    const inside = join(dir, "store");
    mkdirSync(outside);
    writeFileSync(join(outside, "secret.txt"), "secret");
    symlinkSync(join(outside, "secret.txt"), join(dir, "store-link.jsonl"));
    mkdirSync(inside);
    symlinkSync(join(outside, "secret.txt"), join(inside, "evil_link_1.jsonl"));
    const store = new JsonlStore({ path: inside, onProblem: (p) => problems.push(p) });
    const hostile = ["../../etc/passwd", "/etc/shadow", "..", "a\\..\\b", ".hidden", "x/../../y", "\u0000"];
    for (const [i, who] of hostile.entries()) {
      await store.append(`../k/${i}`, [msg(who)], { init: init(who, who === "\u0000" ? "main" : who) });
    }
    const files = jsonlFiles(inside).filter((f) => f !== "evil_link_1.jsonl");
    expect(files).toHaveLength(hostile.length);
    for (const f of files) expect(f).toMatch(/^[\p{L}\p{N}-]+_[\p{L}\p{N}-]*_\d+\.jsonl$/u);
    expect(readdirSync(outside)).toEqual(["secret.txt"]);
    expect(readdirSync(dir).sort()).toEqual(["outside", "store", "store-link.jsonl"]);
    for (const id of ["../../outside/secret", "../store-link", "..", "/etc/passwd"]) {
      expect(await store.getSessionById(id)).toBeUndefined();
      expect(await store.readEntries(id)).toEqual([]);
      expect(await store.deleteGeneration(id)).toEqual({ sessions: 0, entries: 0 });
    }
    // The symlink named like a session file was never followed.
    expect((await store.listSessions({ limit: 100 })).sessions).toHaveLength(hostile.length);
    await store.close();
    expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("secret");
  });

  it("builds the index from the files when it is missing, and reads again only files changed behind it", async () => {
    const n = 500;
    for (let i = 0; i < n; i++) {
      writeFileSync(
        join(dir, `crab_u${i}_1.jsonl`),
        crabMeta("crab", `u${i}`) + line({ role: "user", content: `hello ${i}` }),
      );
    }
    let store = open();
    expect(store.indexStats()).toEqual({ filesRead: n, filesFromIndex: 0 });
    await store.close();
    store = open();
    expect(store.indexStats()).toEqual({ filesRead: 0, filesFromIndex: n });
    appendFileSync(join(dir, "crab_u7_1.jsonl"), line({ role: "assistant", content: "late reply" }));
    await store.close();
    store = open();
    expect(store.indexStats()).toEqual({ filesRead: 1, filesFromIndex: n - 1 });
    expect((await store.getSession("crab:u7"))!.messageCount).toBe(2);
    await store.close();
    // After a crash no index was written: every file is read again.
    rmSync(join(dir, ".sessiond", "index.json"));
    store = open();
    expect(store.indexStats()).toEqual({ filesRead: n, filesFromIndex: 0 });
    await store.close();
  });
});
