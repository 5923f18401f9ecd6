import { describe, expect, it } from "vitest";
import { type BatchResults, GroupCommit } from "../../src/store/group-commit.js";

/** A commit whose batches are acknowledged when the test says so (an fsync in flight). */
function pendingCommits() {
  const batches: Array<{ size: number; ack: () => void; fail: (error: Error) => void }> = [];
  const commit = (ops: ReadonlyArray<() => unknown>): Promise<BatchResults> => {
    const results: BatchResults = ops.map((op) => ({ ok: true, value: op() }));
    return new Promise((resolve, reject) => {
      batches.push({ size: ops.length, ack: () => resolve(results), fail: reject });
    });
  };
  return { batches, commit };
}

const turn = () => new Promise((r) => setImmediate(r));

describe("GroupCommit with commits that settle later", () => {
  it("runs the next batch while one is in flight, at most maxInflight, and flushes only when all settle", async () => {
    const { batches, commit } = pendingCommits();
    const writer = new GroupCommit(commit, { intervalMs: 0, maxBatch: 100, maxInflight: 2 });
    const first = [writer.submit(() => 1), writer.submit(() => 2)];
    await turn();
    const second = writer.submit(() => 3);
    await turn();
    const third = writer.submit(() => 4);
    await turn();
    await turn();
    // Two batches in flight; the third waits for one of them.
    expect(batches.map((b) => b.size)).toEqual([2, 1]);
    let flushed = false;
    const flush = writer.flush().then(() => {
      flushed = true;
    });
    batches[0]!.ack();
    expect(await Promise.all(first)).toEqual([1, 2]);
    await turn();
    expect(batches.map((b) => b.size)).toEqual([2, 1, 1]);
    batches[1]!.ack();
    expect(await second).toBe(3);
    expect(flushed).toBe(false);
    batches[2]!.fail(new Error("disk gone"));
    await expect(third).rejects.toMatchObject({
      code: "STORE_UNAVAILABLE",
      message: expect.stringContaining("disk gone"),
    });
    await flush;
    expect(flushed).toBe(true);
  });
});
