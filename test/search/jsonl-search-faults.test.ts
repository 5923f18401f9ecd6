import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { isSessiondError } from "../../src/model/errors.js";
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";
import { FaultFs } from "../store/fault-fs.js";
import { type Acked, KEYS, random, runWorkload } from "../store/jsonl-workload.js";
import { openRebuilt } from "./jsonl-rebuilt.js";

// The JSONL store with its search index on, through the fault layer of the store's own tests: the
// session files lose what was not made durable, the index (SQLite's own files) keeps all it wrote or
// loses itself whole. Either way, after a reopen, search must agree with the files.

const base = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The workload on a fresh directory, the process dying at mutating call `cutAt`, then the power cut. */
async function crash(
  cutAt: number | undefined,
  keepIndex: boolean,
): Promise<{ dir: string; mutations: number; acked: Acked[] }> {
  const dir = mkdtempSync(join(base, "sessiond-jsonl-search-faults-"));
  dirs.push(dir);
  const fault = new FaultFs(dir, {
    ...(cutAt === undefined ? {} : { cutAt }),
    ...(keepIndex ? { untracked: /^search\.db/ } : {}),
  });
  const acked: Acked[] = [];
  let store: JsonlStore | undefined;
  try {
    store = new JsonlStore({ path: dir, fs: fault.fs, onProblem: () => undefined });
  } catch (error) {
    if (!isSessiondError(error)) throw error;
  }
  if (store) {
    await runWorkload(store, acked);
    // Everything written so far reaches the index before the cut (a search writes what waits).
    await store.search({ text: "m0" }).catch(() => undefined);
    await store.close().catch((error: unknown) => {
      if (!isSessiondError(error)) throw error;
    });
  }
  const mutations = fault.mutations;
  fault.cutPower();
  return { dir, mutations, acked };
}

/** Each message the files hold (current and archived generations), as `key seq content`. */
async function inFiles(store: JsonlStore): Promise<string[]> {
  const out: string[] = [];
  for (const key of KEYS)
    for (const session of await store.generations(key))
      for (const entry of await store.readEntries(session.id))
        if (entry.type === "message") out.push(`${key} ${entry.seq} ${entry.content}`);
  return out.sort();
}

/**
 * Each message search finds for the workload's contents (m0, m1, ...), as `key seq content`. A query
 * also matches words it begins (m1 finds m12): only hits whose whole text is the query count.
 */
async function found(store: JsonlStore, contents: number): Promise<string[]> {
  const out: string[] = [];
  for (let n = 0; n < contents; n++) {
    const page = await store.search({ text: `m${n}`, archived: "include", limit: 100 });
    expect(page.indexing).toBe(false);
    for (const hit of page.hits)
      if (hit.snippet.replace(/<\/?mark>/g, "") === `m${n}`) out.push(`${hit.key} ${hit.seq} m${n}`);
  }
  return out.sort();
}

describe("the JSONL store's search index after a power cut", () => {
  for (const keepIndex of [true, false]) {
    const which = keepIndex ? "kept whole (ahead of the files)" : "lost with the unsynced writes";
    it(`with its index ${which}: search finds exactly what the files hold, every acknowledged message among it`, async () => {
      const dry = await crash(undefined, keepIndex);
      const contents = dry.acked.length + 10;
      const next = random(keepIndex ? 19 : 23);
      for (let i = 0; i < 40; i++) {
        const { dir, acked } = await crash(1 + Math.floor(next() * dry.mutations), keepIndex);
        const { store } = await openRebuilt(dir);
        try {
          const files = await inFiles(store);
          expect(await found(store, contents)).toEqual(files);
          // Only the deleted session's entries may be gone from the files.
          for (const a of acked.filter((a) => a.key !== "w:3"))
            expect(files).toContain(`${a.key} ${a.seq} ${a.content}`);
        } finally {
          await store.close();
        }
        rmSync(dir, { recursive: true, force: true });
      }
    }, 300_000);
  }
});
