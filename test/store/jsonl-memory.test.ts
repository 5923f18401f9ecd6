import { appendFileSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";

describe("JSONL store memory is bounded by bytes", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-jsonl-memory-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("keeps at most cacheBytes of sessions' entries, the most recently used", async () => {
    const store = new JsonlStore({ path: dir, cacheBytes: 20_000 });
    const content = "x".repeat(1000);
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const { session } = await store.append(`k:${i}`, [{ type: "message", role: "user", content }], {
        init: {
          agent: "main",
          channel: "t",
          createdBy: `u${i}`,
        },
      });
      ids.push(session.id);
    }
    for (const id of ids) expect(await store.readEntries(id)).toHaveLength(1);
    const { sessions, bytes } = store.cacheStats();
    expect(bytes).toBeLessThanOrEqual(20_000);
    expect(sessions).toBeGreaterThan(5);
    expect(sessions).toBeLessThan(40);
    // Evicted sessions are read again, whole.
    expect((await store.readEntries(ids[0]!))[0]).toMatchObject({ content });
    await store.close();
  });

  it("refuses appends past maxQueuedBytes waiting with STORE_BUSY, by the bytes each append will write", async () => {
    const store = new JsonlStore({ path: dir, maxQueuedBytes: 10_000 });
    const init = { agent: "main", channel: "t", createdBy: "u" };
    const big = (n: number) =>
      store.append("k", [{ type: "message", role: "user", content: "x".repeat(n) }], { init });
    const first = big(6000);
    const refused = await big(6000).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: "STORE_BUSY" });
    const small = big(100);
    expect((await first).entries[0]!.seq).toBe(1);
    expect((await small).entries[0]!.seq).toBe(2);
    await store.close();
  });

  it("keeps at most problemBytes of problems, the newest", async () => {
    let store = new JsonlStore({ path: dir });
    await store.append("k", [{ type: "message", role: "user", content: "a" }], {
      init: {
        agent: "main",
        channel: "t",
        createdBy: "u",
      },
    });
    await store.close();
    const file = join(dir, readdirSync(dir).find((n) => n.endsWith(".jsonl"))!);
    appendFileSync(file, "not json\n".repeat(1000));
    store = new JsonlStore({ path: dir, problemBytes: 10_000, onProblem: () => undefined });
    const { problems } = store;
    const size = problems.reduce((n, p) => n + 64 + p.file.length + p.reason.length, 0);
    expect(size).toBeLessThanOrEqual(10_000);
    expect(problems.length).toBeGreaterThan(10);
    expect(problems.at(-1)).toMatchObject({ line: 1002, reason: "not JSON" });
    await store.close();
  });
});
