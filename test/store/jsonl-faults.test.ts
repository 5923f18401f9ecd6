import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isSessiondError } from "../../src/model/errors.js";
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";
import { FaultFs, type Faults } from "./fault-fs.js";
import { type Acked, random, runWorkload, verify, view } from "./jsonl-workload.js";

// tmpfs where there is one: the fault layer decides what survives, so the disk's speed only slows the loop.
const base = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();
const dirs: string[] = [];
const freshDir = () => {
  const dir = mkdtempSync(join(base, "sessiond-jsonl-faults-"));
  dirs.push(dir);
  return dir;
};

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

interface Run {
  dir: string;
  fault: FaultFs;
  acked: Acked[];
  /** What the store held in memory after the workload, if it got that far. */
  memory?: unknown[];
  /** How a write after the workload was answered. */
  lastWrite?: unknown;
  /** fsync calls made before that write. */
  fsyncsBefore?: number;
}

/** Opens a store on a fresh directory through a fault layer, runs the workload, closes it. */
async function run(faults: Faults): Promise<Run> {
  const dir = freshDir();
  const fault = new FaultFs(dir, faults);
  const acked: Acked[] = [];
  const result: Run = { dir, fault, acked };
  let store: JsonlStore;
  try {
    // The search index is SQLite's own I/O, outside the fault layer: these runs are about the files.
    store = new JsonlStore({ path: dir, fs: fault.fs, onProblem: () => undefined, searchIndex: false });
  } catch (error) {
    if (!isSessiondError(error)) throw error;
    return result; // died while opening
  }
  await runWorkload(store, acked);
  result.fsyncsBefore = fault.fsyncs;
  result.lastWrite = await store.append("w:0", [{ type: "message", role: "user", content: "last" }]).then(
    () => "ok",
    (error: unknown) => error,
  );
  if (!fault.dead) result.memory = await view(store).catch(() => undefined);
  await store.close().catch((error: unknown) => {
    if (!isSessiondError(error)) throw error;
  });
  return result;
}

describe("JSONL store under injected faults", () => {
  it("a power cut at 1,000 random points: every acknowledged entry present, the store opens, nothing twice", async () => {
    const dry = await run({});
    const points = dry.fault.mutations;
    expect(points).toBeGreaterThan(50);
    const next = random(14);
    for (let i = 0; i < 1000; i++) {
      const cutAt = 1 + Math.floor(next() * points);
      const { dir, fault, acked } = await run({ cutAt });
      fault.cutPower();
      await verify(dir, acked);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 600_000);

  it("ENOSPC at the Nth write, for every N: memory equals what the disk holds, nothing acknowledged lost", async () => {
    const writes = (await run({})).fault.writes;
    for (let n = 1; n <= writes; n++) {
      for (const enospcWrites of [1, 1_000_000]) {
        const { dir, fault, acked, memory } = await run({ enospcAtWrite: n, enospcWrites });
        fault.faults = {}; // the disk has room again
        const disk = await verify(dir, acked);
        if (memory) expect(disk, `ENOSPC at write ${n} (${enospcWrites})`).toEqual(memory);
        rmSync(dir, { recursive: true, force: true });
      }
    }
  }, 600_000);

  it("EIO from the Nth fsync, for every N: the store stops (STORE_FAILED), and after a power cut nothing acknowledged is lost", async () => {
    const fsyncs = (await run({})).fault.fsyncs;
    for (let n = 1; n <= fsyncs; n++) {
      const { dir, fault, acked, lastWrite, fsyncsBefore } = await run({ eioAtFsync: n });
      // Failed before the last write (else in close): that write, and every one after the failure, refused.
      if (fsyncsBefore !== undefined && fsyncsBefore >= n)
        expect(isSessiondError(lastWrite, "STORE_FAILED"), `EIO at fsync ${n}: ${String(lastWrite)}`).toBe(
          true,
        );
      fault.cutPower();
      await verify(dir, acked);
      rmSync(dir, { recursive: true, force: true });
    }
  }, 600_000);

  it("rolls back a batch that creates a session when ENOSPC hits its journal frame: no session over an empty file", async () => {
    const dir = freshDir();
    const fault = new FaultFs(dir);
    const store = new JsonlStore({ path: dir, fs: fault.fs });
    const init = { agent: "main", channel: "t", createdBy: "u1" };
    fault.faults = { enospcAtWrite: fault.writes + 1 }; // the journal's first write
    const failed = await store
      .append("k", [{ type: "message", role: "user", content: "lost" }], { init })
      .catch((error: unknown) => error);
    expect(isSessiondError(failed, "STORE_UNAVAILABLE")).toBe(true);
    expect(await store.getSession("k")).toBeUndefined();
    const { session } = await store.append("k", [{ type: "message", role: "user", content: "kept" }], {
      init,
    });
    await store.close();
    const files = readdirSync(dir).filter((n) => n.endsWith(".jsonl"));
    expect(files).toHaveLength(1);
    const lines = readFileSync(join(dir, files[0]!), "utf8").trim().split("\n");
    expect(JSON.parse(lines[0]!)).toMatchObject({ session_id: session.id });
    expect(lines).toHaveLength(2);
    const reopened = new JsonlStore({ path: dir });
    expect((await reopened.readEntries(session.id)).map((e) => e.type === "message" && e.content)).toEqual([
      "kept",
    ]);
    await reopened.close();
  });
});
