import { spawnSync } from "node:child_process";
import {
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EntryInput } from "../../src/model/entry.js";
import { frameHeader, journalRecords, recordHeader } from "../../src/store/jsonl/journal-format.js";
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";
import type { LineProblem } from "../../src/store/jsonl/session-file.js";

const init = (createdBy = "u1") => ({ agent: "main", channel: "telegram", createdBy });
const msg = (content: string): EntryInput => ({ type: "message", role: "user", content });
const sessionFiles = (dir: string) => readdirSync(dir).filter((n) => n.endsWith(".jsonl"));
const contents = async (store: JsonlStore, key: string) => {
  const session = (await store.getSession(key))!;
  return (await store.readEntries(session.id)).map((e) => (e.type === "message" ? e.content : e.type));
};

/**
 * A power cut, after the writer is gone: its journal (fsync'd) survives under the name of a process that
 * has exited; `cut` takes from the session files what was not fsync'd.
 */
function powerCut(dir: string, cut: () => void): string {
  const meta = join(dir, ".sessiond");
  const journal = readdirSync(meta).find((n) => n.startsWith(`journal-${process.pid}-`))!;
  const deadPid = spawnSync(process.execPath, ["-e", ""]).pid;
  const copy = join(meta, `journal-${deadPid}-0badf00d.jsonl`);
  writeFileSync(copy, readFileSync(join(meta, journal)));
  cut();
  return copy;
}

describe("JSONL store journal", () => {
  let dir: string;
  let problems: LineProblem[];
  const open = () => new JsonlStore({ path: dir, onProblem: (p) => problems.push(p) });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-jsonl-journal-"));
    problems = [];
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("replays only what was journaled since the last checkpoint", async () => {
    const writer = open();
    await writer.append("k:a", [msg("a1")], { init: init("a") });
    await writer.append("k:a", [msg("a2")]);
    await writer.sync();
    const fileA = join(dir, sessionFiles(dir)[0]!);
    await writer.append("k:b", [msg("b1")], { init: init("b") });
    await writer.append("k:b", [msg("b2")]);
    const fileB = join(dir, sessionFiles(dir).find((n) => join(dir, n) !== fileA)!);
    const metaLineA = readFileSync(fileA, "utf8").split("\n")[0]!;
    powerCut(dir, () => {
      // k:a changed after the checkpoint (cut back to its first line here): the journal, reused since,
      // must not bring back what it held of k:a before the checkpoint.
      writeFileSync(fileA, `${metaLineA}\n`);
      truncateSync(fileB, 0);
    });
    const reader = open();
    expect(await contents(reader, "k:b")).toEqual(["b1", "b2"]);
    expect((await reader.getSession("k:a"))!.entryCount).toBe(0);
    await reader.close();
    await writer.close();
    expect(problems).toEqual([]);
  });

  it("a late replay never cuts or overwrites bytes written since at a record's offset: it reports the record", async () => {
    const writer = open();
    await writer.append("k:l", [msg("first")], { init: init() });
    await writer.sync();
    await writer.append("k:l", [msg("journaled, lost from the file")]);
    const file = join(dir, sessionFiles(dir)[0]!);
    const synced = readFileSync(file, "utf8").split("\n").slice(0, 2).join("\n");
    // The writer's journal outlives it; meanwhile another process wrote other lines where its record goes.
    const since = `${synced}\n{"role":"user","content":"written since by another process, a longer line than the record"}\n`;
    const copy = powerCut(dir, () => writeFileSync(file, since));
    const reader = open();
    expect(readFileSync(file, "utf8")).toBe(since);
    expect(problems).toEqual([
      {
        file: copy,
        line: 1,
        reason: `${basename(file)} holds other bytes at offset ${Buffer.byteLength(synced) + 1}, written since; the record is not replayed`,
      },
    ]);
    await reader.close();
    await writer.close();
  });

  it("does not replay a batch whose bytes did not all reach the journal, and keeps the ones before it", async () => {
    const writer = open();
    await writer.append("k:t", [msg("zero")], { init: init() });
    await writer.sync();
    const file = join(dir, sessionFiles(dir)[0]!);
    const synced = statSync(file).size;
    await writer.append("k:t", [msg("one")]);
    await writer.append("k:t", [msg("two")]);
    const copy = powerCut(dir, () => truncateSync(file, synced));
    // A torn write of the last batch: one byte of it never made it.
    const journal = readFileSync(copy);
    const at = journal.lastIndexOf("two");
    journal[at] = 0;
    writeFileSync(copy, journal);
    const reader = open();
    expect(await contents(reader, "k:t")).toEqual(["zero", "one"]);
    await reader.close();
    await writer.close();
    expect(problems).toEqual([]);
  });

  it("replays a journal written before batches were framed", async () => {
    const writer = open();
    await writer.append("k:o", [msg("first")], { init: init() });
    await writer.close();
    const name = sessionFiles(dir)[0]!;
    const file = join(dir, name);
    const before = readFileSync(file);
    const bytes = Buffer.from(
      `${JSON.stringify({ role: "user", content: "late", seq: 2, id: "01J0000000000000000000000X", ts: 1 })}\n`,
    );
    const deadPid = spawnSync(process.execPath, ["-e", ""]).pid;
    writeFileSync(
      join(dir, ".sessiond", `journal-${deadPid}-01df0a0a.jsonl`),
      Buffer.concat([
        Buffer.from(`${JSON.stringify({ f: name, o: before.length, n: bytes.length })}\n`),
        bytes,
      ]),
    );
    const reader = open();
    expect(await contents(reader, "k:o")).toEqual(["first", "late"]);
    await reader.close();
    expect(problems).toEqual([]);
  });
});

describe("JSONL journal frames", () => {
  const frame = (epoch: number, ...records: Array<[string, number, string]>) => {
    const payload = Buffer.from(
      records.map(([f, o, text]) => recordHeader(f, o, Buffer.byteLength(text)) + text).join(""),
    );
    return Buffer.concat([frameHeader(epoch, payload), payload]);
  };
  const read = (journal: Buffer) =>
    [...journalRecords(journal)].map((r) =>
      r.kind === "record" ? `${r.file}@${r.offset}:${r.bytes}` : r.reason,
    );

  it("reads the frames of the first frame's epoch, up to the first that is not whole", () => {
    const current = Buffer.concat([
      frame(2),
      frame(2, ["a_u_1.jsonl", 0, "x\n"], ["b_u_1.jsonl", 5, "yy\n"]),
    ]);
    const stale = frame(1, ["c_u_1.jsonl", 0, "z\n"]);
    expect(read(Buffer.concat([current, stale]))).toEqual(["a_u_1.jsonl@0:x\n", "b_u_1.jsonl@5:yy\n"]);
    expect(read(Buffer.concat([current, Buffer.alloc(4096)]))).toEqual([
      "a_u_1.jsonl@0:x\n",
      "b_u_1.jsonl@5:yy\n",
    ]);
    const torn = frame(2, ["c_u_1.jsonl", 0, "z\n"]);
    torn[torn.length - 2] = 0x41;
    expect(read(Buffer.concat([current, torn, frame(2, ["d_u_1.jsonl", 0, "w\n"])]))).toHaveLength(2);
    expect(read(Buffer.concat([current, torn.subarray(0, torn.length - 1)]))).toHaveLength(2);
  });
});
