import {
  createWriteStream,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { readBackup } from "../../src/cli/backup/jsonl-archive.js";
import type { Entry } from "../../src/model/entry.js";
import { jsonlBackupStream } from "../../src/store/jsonl/backup-stream.js";
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";

const dirs: string[] = [];
const temp = (name: string) => {
  const dir = mkdtempSync(join(tmpdir(), `sessiond-${name}-`));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const init = { agent: "main", channel: "test", createdBy: "tester" };
const say = (content: string) => ({ type: "message" as const, role: "user" as const, content });

/** Each key's sessions (every generation) with their entries, as a store shows them. */
type Contents = Record<string, Array<{ generation: number; title: string; entries: Entry[] }>>;
async function contents(store: JsonlStore): Promise<Contents> {
  const out: Contents = {};
  const { sessions } = await store.listSessions({ includeArchived: true, limit: 1000 });
  for (const session of sessions) {
    const entries = await store.readEntries(session.id);
    const list = out[session.key] ?? [];
    list.push({ generation: session.generation, title: session.title, entries });
    out[session.key] = list;
  }
  for (const list of Object.values(out)) list.sort((a, b) => a.generation - b.generation);
  return out;
}

async function restore(archive: string): Promise<JsonlStore> {
  const into = join(temp("restored"), "sessions");
  await readBackup(archive, into);
  return new JsonlStore({
    path: into,
    searchIndex: false,
    onProblem: (p) => expect.fail(`${p.file}: ${p.reason}`),
  });
}

describe("a JSONL store's backup (store/jsonl/backup-stream.ts)", () => {
  it("is the store at the instant it was asked for, whatever changes while its bytes are read", async () => {
    const dir = join(temp("backup"), "sessions");
    const store = new JsonlStore({ path: dir, searchIndex: false });
    await store.append("k:titled", [say("to be titled after the snapshot")], { init });
    await store.append("k:deleted", [say("deleted after the snapshot")], { init });
    await store.append("k:grows", [say("one"), say("two")], { init });
    await store.append("k:reset", [say("the first generation")], { init });
    await store.append("k:relaxed", [say("relaxed")], { init, durability: "relaxed" });
    // Taken the moment a batch of 10 appends (too many to be written at once, INLINE_SYNC_MAX_BATCH) is
    // acknowledged: its bytes are in the journal, still queued for their files (they follow once the store
    // is idle), and the snapshot writes them out first.
    const { stream } = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        store.append(`k:queued-${i}`, [say("only in the journal yet")], { init }),
      ),
    ).then(() => jsonlBackupStream(store));
    const expected = await contents(store);
    expect(Object.keys(expected).filter((k) => k.startsWith("k:queued-"))).toHaveLength(10);

    // All of this lands after the instant: a title rewrites line 1 into a new file and renames it, a delete
    // unlinks, appends grow files past their length then, a reset makes a new file.
    await store.append("k:titled", [{ type: "title", title: "A title set later" }, say("after")], { init });
    await store.delete("k:deleted");
    await store.append("k:grows", [say("three")], { init });
    await store.reset("k:reset", "manual", init);
    await store.append("k:new", [say("a session born after the snapshot")], { init });
    const archive = join(temp("archive"), "backup.tar.gz");
    await pipeline(stream, createWriteStream(archive));
    const live = await contents(store);
    expect(live["k:deleted"]).toBeUndefined();
    expect(live["k:titled"]?.[0]?.title).toBe("A title set later");
    await store.close();

    const restored = await restore(archive);
    try {
      expect(await contents(restored)).toEqual(expected);
      // The store goes on from the copy: appends continue each session's seq.
      const next = await restored.append("k:grows", [say("three, in the restored store")], { init });
      expect(next.entries[0]?.seq).toBe(3);
    } finally {
      await restored.close();
    }
  });

  it("leaves out what each open rebuilds, copies the runtime sessions' database, and removes its links", async () => {
    const dir = join(temp("backup"), "sessions");
    const store = new JsonlStore({ path: dir });
    await store.append("k:a", [say("indexed")], { init });
    await store.search({ text: "indexed" });
    // A WAL database beside the store, its last row only in the -wal while the connection stays open.
    const runtime = new Database(join(dir, ".sessiond", "runtime-sessions.db"));
    runtime.pragma("journal_mode = WAL");
    runtime.exec("CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('in the wal')");
    const archive = join(temp("archive"), "backup.tar.gz");
    const names: string[] = [];
    try {
      await pipeline(jsonlBackupStream(store).stream, createWriteStream(archive));
    } finally {
      runtime.close();
    }
    const summary = await readBackup(archive, join(temp("list"), "x"));
    const listed = join(dirs.at(-1)!, "x");
    const walk = (d: string, prefix: string): void => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        if (e.isDirectory()) walk(join(d, e.name), `${prefix}${e.name}/`);
        else names.push(`${prefix}${e.name}`);
      }
    };
    walk(listed, "");
    expect(summary.files).toBe(names.length);
    expect(names.some((n) => /^main_.*\.jsonl$|\.jsonl$/.test(n) && !n.includes("/"))).toBe(true);
    expect(names.filter((n) => /journal-|search\.db|index\.json|backup-|-wal|-shm/.test(n))).toEqual([]);
    const copied = new Database(join(listed, ".sessiond", "runtime-sessions.db"), { readonly: true });
    expect(copied.prepare("SELECT v FROM t").pluck().all()).toEqual(["in the wal"]);
    copied.close();
    expect(readdirSync(join(dir, ".sessiond")).filter((n) => n.startsWith("backup-"))).toEqual([]);
    await store.close();
  });

  it("refuses a copy cut short, naming the file, and writes nothing of it", async () => {
    const dir = join(temp("backup"), "sessions");
    const store = new JsonlStore({ path: dir, searchIndex: false });
    await store.append("k:a", [say("x".repeat(200_000))], { init });
    const archive = join(temp("archive"), "backup.tar.gz");
    await pipeline(jsonlBackupStream(store).stream, createWriteStream(archive));
    await store.close();
    const whole = readFileSync(archive);
    const cut = join(dirs.at(-1)!, "cut.tar.gz");
    const { gzipSync, gunzipSync } = await import("node:zlib");
    const tar = gunzipSync(whole);
    // The tar without its last 2 KB (the manifest and the end), gzipped again: it reads, but is not whole.
    const { writeFileSync } = await import("node:fs");
    writeFileSync(cut, gzipSync(tar.subarray(0, tar.length - 2048)));
    await expect(readBackup(cut)).rejects.toThrow(
      /cut\.tar\.gz is not a whole sessiond JSONL backup: it is cut short/,
    );
    expect(statSync(archive).size).toBe(whole.length);
  });

  it("an open removes the snapshot folder of a process that stopped midway, and keeps a live one's", async () => {
    const dir = join(temp("backup"), "sessions");
    const first = new JsonlStore({ path: dir, searchIndex: false });
    await first.append("k:a", [say("x")], { init });
    await first.close();
    const meta = join(dir, ".sessiond");
    // PID 2^22 + 1 is above Linux's largest: no process has it. PID 1 always runs.
    mkdirSync(join(meta, "backup-4194305-0-0-deadbeef"));
    mkdirSync(join(meta, "backup-1-0-0-cafebabe"));
    const again = new JsonlStore({ path: dir, searchIndex: false });
    try {
      expect(readdirSync(meta).filter((n) => n.startsWith("backup-"))).toEqual(["backup-1-0-0-cafebabe"]);
    } finally {
      await again.close();
    }
  });
});
