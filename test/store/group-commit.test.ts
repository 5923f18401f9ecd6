import { describe, expect, it } from "vitest";
import { SessiondError } from "../../src/model/errors.js";
import { type CommitBatch, GroupCommit } from "../../src/store/group-commit.js";

const runAll: CommitBatch = (ops) => ops.map((op) => ({ ok: true as const, value: op() }));

function failingBarrier(): { barrier: () => Promise<void>; fail: () => void } {
  let failNext = false;
  return {
    barrier: () => (failNext ? Promise.reject(new Error("EIO: i/o error, fdatasync")) : Promise.resolve()),
    fail: () => {
      failNext = true;
    },
  };
}

describe("GroupCommit fail-stop", () => {
  it("after a failed durable barrier, reports the batch as outcome unknown and refuses every later write", async () => {
    const { barrier, fail } = failingBarrier();
    const writer = new GroupCommit(runAll, { intervalMs: 0, maxBatch: 100, durableBarrier: barrier });
    await expect(writer.submit(() => 1)).resolves.toBe(1);
    fail();
    const inFailedBatch = writer.submit(() => 2);
    await expect(inFailedBatch).rejects.toMatchObject({
      code: "STORE_FAILED",
      details: { outcome: "unknown" },
    });
    await expect(writer.submit(() => 3)).rejects.toMatchObject({
      code: "STORE_FAILED",
      details: { outcome: "not-written" },
    });
    expect(writer.failed?.message).toContain("EIO");
  });

  it("refuses, without running them, the writes that were queued behind the failed batch", async () => {
    const { barrier, fail } = failingBarrier();
    const ran: number[] = [];
    const writer = new GroupCommit(runAll, { intervalMs: 0, maxBatch: 1, durableBarrier: barrier });
    fail();
    const results = await Promise.allSettled(
      [1, 2, 3].map((n) =>
        writer.submit(() => {
          ran.push(n);
          return n;
        }),
      ),
    );
    expect(ran).toEqual([1]);
    expect(
      results.map((r) => (r.status === "rejected" ? (r.reason as SessiondError).details?.outcome : "ok")),
    ).toEqual(["unknown", "not-written", "not-written"]);
  });

  it("stops when the store's commit reports STORE_FAILED (an inline fsync failed), not on other commit errors", async () => {
    let error: unknown = new Error("SQLITE_BUSY: database is locked");
    const writer = new GroupCommit(
      (ops) => {
        if (error) throw error;
        return runAll(ops, true);
      },
      { intervalMs: 0, maxBatch: 100 },
    );
    await expect(writer.submit(() => 1)).rejects.toMatchObject({ code: "STORE_UNAVAILABLE" });
    error = undefined;
    await expect(writer.submit(() => 2)).resolves.toBe(2);
    error = new SessiondError("STORE_FAILED", "fdatasync of the WAL failed: EIO");
    await expect(writer.submit(() => 3)).rejects.toMatchObject({
      code: "STORE_FAILED",
      details: { outcome: "unknown" },
    });
    error = undefined;
    await expect(writer.submit(() => 4)).rejects.toMatchObject({ code: "STORE_FAILED" });
  });

  it("failStop from outside refuses what is queued and what comes later", async () => {
    const writer = new GroupCommit(runAll, { intervalMs: 0, maxBatch: 100 });
    const queued = writer.submit(() => 1);
    writer.failStop(new Error("EIO from a checkpoint's fsync"));
    await expect(queued).rejects.toMatchObject({ code: "STORE_FAILED", details: { outcome: "not-written" } });
    await expect(writer.flush()).resolves.toBeUndefined();
  });
});

describe("GroupCommit queue bound", () => {
  it("refuses a write with STORE_BUSY when the bytes waiting would pass the bound, and takes it again once drained", async () => {
    const writer = new GroupCommit(runAll, { intervalMs: 0, maxBatch: 100, maxQueuedBytes: 1000 });
    const first = writer.submit(() => "a", true, 600);
    const second = writer.submit(() => "b", true, 600);
    await expect(second).rejects.toMatchObject({ code: "STORE_BUSY" });
    await expect(first).resolves.toBe("a");
    await expect(writer.submit(() => "c", true, 600)).resolves.toBe("c");
  });

  it("takes one oversized write when nothing waits, so a large message is never refused forever", async () => {
    const writer = new GroupCommit(runAll, { intervalMs: 0, maxBatch: 100, maxQueuedBytes: 10 });
    await expect(writer.submit(() => "big", true, 1000)).resolves.toBe("big");
  });

  it("bounds the number of waiting operations too", async () => {
    const writer = new GroupCommit(runAll, { intervalMs: 0, maxBatch: 100, maxQueued: 2 });
    const results = await Promise.allSettled([1, 2, 3].map((n) => writer.submit(() => n)));
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "rejected"]);
  });
});
