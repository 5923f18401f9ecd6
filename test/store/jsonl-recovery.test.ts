import { mkdtempSync, readdirSync, rmSync, truncateSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";
import type { LineProblem } from "../../src/store/jsonl/session-file.js";
import { type Ack, runAndKill } from "./crash-run.js";

describe("JSONL store recovery", () => {
  let dir: string;
  let problems: LineProblem[];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-jsonl-recovery-"));
    problems = [];
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("keeps every acknowledged append through a SIGKILL mid-batch and a power cut that takes the unsynced session files", async () => {
    const acked = await runAndKill({ backend: "jsonl", path: dir }, 3000);
    // No checkpoint yet (20 sessions, well under the journal's limit): no session file was fsync'd, so a
    // power cut may take all of their bytes; only the journal's are safe.
    for (const name of readdirSync(dir).filter((n) => n.endsWith(".jsonl"))) truncateSync(join(dir, name), 0);
    const store = new JsonlStore({ path: dir, onProblem: (p) => problems.push(p) });
    const byKey = new Map<string, Ack[]>();
    for (const a of acked) byKey.set(a.key, [...(byKey.get(a.key) ?? []), a]);
    expect(byKey.size).toBe(20);
    for (const [key, acks] of byKey) {
      const session = (await store.getSession(key))!;
      const entries = await store.readEntries(session.id);
      expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: session.entryCount }, (_, i) => i + 1));
      const ids = new Map(entries.map((e) => [e.seq, e.id]));
      for (const ack of acks) expect(ids.get(ack.seq)).toBe(ack.id);
    }
    await store.close();
    expect(problems).toEqual([]);
  });
});
