import { spawn } from "node:child_process";
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  utimesSync,
  watch,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SearchQuery } from "../../src/search/query.js";
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";
import { missingAcks, nodeCommand, runAndKill } from "../store/crash-run.js";
import { openRebuilt, openWatched } from "./jsonl-rebuilt.js";
import { runSearchContract } from "./search-contract.js";

runSearchContract("jsonl", async (dir) => new JsonlStore({ path: dir, onProblem: () => undefined }));

const init = { agent: "main", channel: "telegram", createdBy: "test" };
const T0 = Date.now() - 1000 * 3600_000;
const WORDS = ["heron", "otter", "maple", "cobalt", "lantern"];

/** 250 sessions of two messages each, written session after session, each message at its own time. */
async function fill(store: JsonlStore): Promise<void> {
  let n = 0;
  for (let s = 0; s < 250; s++) {
    const ts = () => T0 + n++ * 60_000;
    await store.append(
      `telegram:${s}`,
      [
        { type: "message", role: "user", content: `a ${WORDS[s % 5]} note number ${s}`, ts: ts() },
        {
          type: "message",
          role: "assistant",
          content: `the ${WORDS[(s * 3) % 5]} 北京大学 reply ${s}`,
          ts: ts(),
        },
      ],
      { init },
    );
  }
  await store.append("telegram:7", [{ type: "message", role: "user", content: "zygomorphic flower" }]);
  await store.reset("telegram:9", "manual", init);
}

const QUERIES: SearchQuery[] = [
  { text: "zygomorphic" },
  { text: "heron" },
  { text: "the" },
  { text: '"cobalt note"' },
  { text: "lantern", role: "assistant", keyPrefix: "telegram:1" },
  { text: "北京" },
  { text: "otter", archived: "only" },
  { text: "numb" },
];

/** Every page of every query: what each hit says, in order. */
async function everything(store: JsonlStore): Promise<string[][]> {
  const out: string[][] = [];
  for (const query of QUERIES) {
    const hits: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await store.search({ ...query, limit: 100, ...(cursor ? { cursor } : {}) });
      expect(page.indexing).toBe(false);
      for (const h of page.hits) hits.push(`${h.key} ${h.generation} ${h.archived} ${h.seq} ${h.snippet}`);
      cursor = page.nextCursor;
    } while (cursor);
    out.push(hits);
  }
  return out;
}

const meta = (dir: string, name: string) => join(dir, ".sessiond", name);

describe("the JSONL store's search index", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-jsonl-search-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("removed, is rebuilt from the files in the background (reported, results marked meanwhile) and gives the same results", async () => {
    const first = new JsonlStore({ path: dir, onProblem: () => undefined });
    await fill(first);
    const before = await everything(first);
    expect(before[0]).toEqual(["telegram:7 1 false 3 <mark>zygomorphic</mark> flower"]);
    expect(before[2]).toHaveLength(250);
    await first.close();
    for (const name of ["search.db", "search.json"]) rmSync(meta(dir, name));

    const { store, reports, rebuilt } = openWatched(dir);
    const during = await store.search({ text: "heron" });
    expect(during.indexing).toBe(true);
    await rebuilt;
    expect(reports.map((r) => [r.done, r.total])).toEqual([
      [200, 251],
      [251, 251],
    ]);
    expect(await everything(store)).toEqual(before);
    await store.close();
  });

  it("a rebuild stopped by a close resumes where it stopped", async () => {
    const first = new JsonlStore({ path: dir, onProblem: () => undefined });
    await fill(first);
    const before = await everything(first);
    await first.close();
    rmSync(meta(dir, "search.db"));
    const stopped = await new Promise<Promise<void>>((resolve) => {
      const store: JsonlStore = new JsonlStore({
        path: dir,
        onProblem: () => undefined,
        onIndexProgress: () => resolve(store.close()),
      });
    });
    await stopped;
    const { store, reports } = await openRebuilt(dir);
    expect(reports.map((r) => [r.done, r.total])).toEqual([[51, 51]]);
    expect(await everything(store)).toEqual(before);
    await store.close();
  });

  it("finds what was appended to a file by hand, or edited in place, while the store was closed", async () => {
    const first = new JsonlStore({ path: dir, onProblem: () => undefined });
    await first.append("telegram:1", [{ type: "message", role: "user", content: "alpha quokka" }], { init });
    await first.append("telegram:2", [{ type: "message", role: "user", content: "gone quokka" }], { init });
    await first.close();
    const files = readdirSync(dir)
      .filter((n) => n.endsWith(".jsonl"))
      .map((f) => join(dir, f));
    const one = files.find((f) => readFileSync(f, "utf8").includes("alpha"));
    const two = files.find((f) => f !== one);
    // CrabTalk's own line (no sessiond fields), and the same bytes count with another word.
    appendFileSync(one!, `${JSON.stringify({ role: "assistant", content: "a walrus by hand" })}\n`);
    writeFileSync(one!, readFileSync(one!, "utf8").replace("alpha quokka", "omega quokka"));
    rmSync(two!);
    const { store } = await openRebuilt(dir);
    const found = (text: string) => store.search({ text }).then((r) => r.hits.map((h) => [h.key, h.seq]));
    expect(await found("walrus")).toEqual([["telegram:1", 2]]);
    expect(await found("omega")).toEqual([["telegram:1", 1]]);
    expect(await found("alpha")).toEqual([]);
    expect(await found("quokka")).toEqual([["telegram:1", 1]]);
    await store.close();
  });

  it("finds what a second process appended while this one has the index open", async () => {
    const store = new JsonlStore({ path: dir, onProblem: () => undefined });
    await store.append("telegram:1", [{ type: "message", role: "user", content: "first puffin" }], { init });
    await store.flush();
    const [file] = readdirSync(dir).filter((n) => n.endsWith(".jsonl"));
    // The store learns of the other process's write from the directory's change events, as this watch does.
    const written = new Promise<void>((resolve) => {
      const watcher = watch(dir, (_event, name) => {
        if (name === file) {
          watcher.close();
          resolve();
        }
      });
    });
    const [command, args] = nodeCommand("../search/jsonl-append-child.ts", [
      dir,
      "telegram:1",
      "second puffin",
    ]);
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "inherit"] });
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    expect(await exited).toBe(0);
    await written;
    await new Promise((resolve) => setImmediate(resolve));
    const { hits, indexing } = await store.search({ text: "puffin" });
    expect(hits.map((h) => [h.seq, h.snippet]).sort()).toEqual([
      [1, "first <mark>puffin</mark>"],
      [2, "second <mark>puffin</mark>"],
    ]);
    expect(indexing).toBe(false);
    // The core read the key again too: the next append numbers after the other process's.
    const { entries } = await store.append("telegram:1", [
      { type: "message", role: "user", content: "third" },
    ]);
    expect(entries[0]?.seq).toBe(3);
    await store.close();
  }, 120_000);

  it("killed mid-stream, is rebuilt from the files on reopen: every acknowledged message is found", async () => {
    const acks = await runAndKill({ backend: "jsonl", path: dir }, 300);
    expect(existsSync(meta(dir, "search.json"))).toBe(false);
    const { store } = await openRebuilt(dir);
    const found: Record<string, string[]> = {};
    let cursor: string | undefined;
    do {
      const page = await store.search({ text: "x".repeat(200), limit: 100, ...(cursor ? { cursor } : {}) });
      for (const h of page.hits) {
        const [entry] = await store.readEntries(h.sessionId, { afterSeq: h.seq - 1, limit: 1 });
        found[h.key] = [...(found[h.key] ?? []), `${h.seq} ${entry?.id}`];
      }
      cursor = page.nextCursor;
    } while (cursor);
    expect(missingAcks(acks, found)).toEqual([]);
    await store.close();
  }, 120_000);

  it("a torn or damaged index file is never trusted: it is replaced and rebuilt", async () => {
    const first = new JsonlStore({ path: dir, onProblem: () => undefined });
    await fill(first);
    const before = await everything(first);
    await first.close();
    const db = meta(dir, "search.db");
    // Torn: cut to half.
    truncateSync(db, Math.floor(statSync(db).size / 2));
    let { store } = await openRebuilt(dir);
    expect(await everything(store)).toEqual(before);
    await store.close();
    // Damaged behind a close record that still matches: every page after the first zeroed, size and mtime kept.
    const { size, atime, mtime } = statSync(db);
    const bytes = readFileSync(db);
    bytes.fill(0, 4096);
    writeFileSync(db, bytes);
    utimesSync(db, atime, mtime);
    expect(statSync(db).size).toBe(size);
    ({ store } = await openRebuilt(dir));
    expect(await everything(store)).toEqual(before);
    await store.close();
  });

  it("a write to the index that fails (another connection holds its lock) sends its sessions to the rebuild, which finds them once it can write", async () => {
    const { store, rebuilt } = openWatched(dir);
    const locker = new Database(meta(dir, "search.db"));
    locker.exec("BEGIN IMMEDIATE");
    await store.append("telegram:1", [{ type: "message", role: "user", content: "quiet pelican" }], { init });
    // Every write to the index waits out its busy timeout and fails while the lock is held.
    const during = await store.search({ text: "pelican" });
    expect(during).toMatchObject({ hits: [], indexing: true });
    locker.exec("ROLLBACK");
    locker.close();
    await rebuilt;
    const after = await store.search({ text: "pelican" });
    expect(after.hits.map((h) => `${h.key} ${h.seq}`)).toEqual(["telegram:1 1"]);
    expect(after.indexing).toBe(false);
    await store.close();
  }, 120_000);

  it("a second store on the directory reads the owner's index and writes none", async () => {
    const owner = new JsonlStore({ path: dir, onProblem: () => undefined });
    await owner.append("telegram:1", [{ type: "message", role: "user", content: "shared gannet" }], { init });
    await owner.search({ text: "gannet" });
    const reader = new JsonlStore({ path: dir, onProblem: () => undefined });
    expect((await reader.search({ text: "gannet" })).hits.map((h) => h.key)).toEqual(["telegram:1"]);
    // Deleted by the reader: the owner's index still has it, the reader's results do not.
    await reader.delete("telegram:1");
    expect((await reader.search({ text: "gannet" })).hits).toEqual([]);
    await reader.close();
    expect(existsSync(meta(dir, "search.json"))).toBe(false);
    await owner.close();
    expect(existsSync(meta(dir, "search.json"))).toBe(true);
  });

  it("without its index (searchIndex: false) search fails with SEARCH_UNAVAILABLE and no index file is made", async () => {
    const store = new JsonlStore({ path: dir, searchIndex: false });
    await store.append("telegram:1", [{ type: "message", role: "user", content: "kiwi" }], { init });
    await expect(store.search({ text: "kiwi" })).rejects.toMatchObject({ code: "SEARCH_UNAVAILABLE" });
    await store.close();
    expect(existsSync(meta(dir, "search.db"))).toBe(false);
  });
});
