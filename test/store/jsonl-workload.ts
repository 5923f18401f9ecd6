// A small, fixed mix of writes for the JSONL fault tests, and the checks made after it: every
// acknowledged entry present, nothing duplicated, every session gap-free.
import { expect } from "vitest";
import { isSessiondError } from "../../src/model/errors.js";
import type { Session } from "../../src/model/session.js";
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";
import type { LineProblem } from "../../src/store/jsonl/session-file.js";
import { FaultFs } from "./fault-fs.js";

export { random } from "../../bench/support.js";

export interface Acked {
  key: string;
  sessionId: string;
  seq: number;
  id: string;
  content: string;
}

export const KEYS = ["w:0", "w:1", "w:2", "w:3"] as const;
/** Deleted by the workload: its entries are checked for duplicates only. */
const DELETED = "w:3";

const init = (key: string) => ({ agent: "main", channel: "t", createdBy: `u-${key.slice(2)}` });

const settled = async (write: Promise<unknown>) => {
  try {
    await write;
  } catch (error) {
    if (!isSessiondError(error)) throw error;
  }
};

/** Runs the workload; every append that resolves is pushed to `acked`. Rejections are expected. */
export async function runWorkload(store: JsonlStore, acked: Acked[]): Promise<void> {
  let n = 0;
  const append = async (key: string, idempotencyKey?: string) => {
    const content = `m${n++}`;
    try {
      const { session, entries, created } = await store.append(
        key,
        [{ type: "message", role: "user", content, ...(idempotencyKey ? { idempotencyKey } : {}) }],
        { init: init(key) },
      );
      const entry = entries[0]!;
      if (created[0] && entry.type === "message")
        acked.push({ key, sessionId: session.id, seq: entry.seq, id: entry.id, content });
    } catch (error) {
      if (!isSessiondError(error)) throw error;
    }
  };
  for (let round = 0; round < 6; round++) {
    await Promise.all(KEYS.map((key) => append(key)));
    await append("w:2", `idem-${round % 3}`);
    if (round === 1) await settled(store.append("w:0", [{ type: "title", title: "Hello there" }]));
    if (round === 2) await settled(store.sync());
    if (round === 3) await settled(store.reset("w:1", "manual"));
    if (round === 4) await settled(store.updateSession("w:2", { overrides: { model: "m" } }));
    if (round === 4) await settled(store.delete(DELETED));
  }
}

/** What a store says it holds, for comparing memory with what a later open reads from disk. */
export async function view(store: JsonlStore): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const key of KEYS) {
    for (const s of await store.generations(key)) {
      const entries = await store.readEntries(s.id);
      out.push({ ...pick(s), entries: entries.map((e) => [e.seq, e.id]) });
    }
  }
  return out;
}

function pick(s: Session) {
  const { id, key, generation, state, entryCount, messageCount, title, overrides } = s;
  return { id, key, generation, state, entryCount, messageCount, title, overrides };
}

/**
 * Opens the directory (through a fault layer without faults, so no real fsync slows the loop) and checks
 * it: every acknowledged entry present, no content twice, every session's seqs 1..n. Returns its view.
 */
export async function verify(dir: string, acked: readonly Acked[]): Promise<unknown[]> {
  const problems: LineProblem[] = [];
  const store = new JsonlStore({
    path: dir,
    fs: new FaultFs(dir).fs,
    onProblem: (p) => problems.push(p),
    searchIndex: false,
  });
  const seen = new Set<string>();
  for (const key of KEYS) {
    for (const s of await store.generations(key)) {
      const entries = await store.readEntries(s.id);
      expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1));
      for (const e of entries) {
        if (e.type !== "message") continue;
        expect(seen.has(e.content), `${e.content} twice`).toBe(false);
        seen.add(e.content);
      }
    }
  }
  for (const ack of acked) {
    if (ack.key === DELETED) continue;
    const entries = await store.readEntries(ack.sessionId);
    const entry = entries.find((e) => e.seq === ack.seq);
    expect(entry && [entry.id, entry.type === "message" ? entry.content : ""], JSON.stringify(ack)).toEqual([
      ack.id,
      ack.content,
    ]);
  }
  const seenView = await view(store);
  await store.close();
  expect(problems).toEqual([]);
  return seenView;
}
