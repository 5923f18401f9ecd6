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

describe("GroupCommit pipelined (maxInFlight 2)", () => {
  interface Op {
    keys?: string[];
    name: string;
  }
  /** A commit that answers only when told to: each call's ops and its release. */
  function heldCommits() {
    const calls: Array<{ names: string[]; release: () => void }> = [];
    let notify: (() => void) | undefined;
    const commit: CommitBatch<Op> = (ops) =>
      new Promise((resolve) => {
        calls.push({
          names: ops.map((o) => o.name),
          release: () => resolve(ops.map((o) => ({ ok: true as const, value: o.name }))),
        });
        notify?.();
      });
    const called = (n: number) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (calls.length >= n) resolve();
          else notify = check;
        };
        check();
      });
    return { calls, commit, called };
  }
  const options = { intervalMs: 0, maxBatch: 100, maxInFlight: 2, keysOf: (op: Op) => op.keys };

  it("commits the next batch while one is in flight, holding back the keys that batch holds, in order", async () => {
    const { calls, commit, called } = heldCommits();
    const writer = new GroupCommit<Op>(commit, options);
    const settled: string[] = [];
    const submit = (name: string, keys?: string[]) =>
      writer.submit<string>(keys ? { name, keys } : { name }).then((v) => settled.push(v));
    const first = [submit("a1", ["a"]), submit("b1", ["b"])];
    await called(1);
    const later = [submit("a2", ["a"]), submit("c1", ["c"]), submit("a3", ["a"])];
    await called(2);
    // c1 went beside the batch in flight; a2 and a3 wait for it, in order.
    expect(calls.map((c) => c.names)).toEqual([["a1", "b1"], ["c1"]]);
    expect(settled).toEqual([]);
    calls[1]!.release();
    await later[1];
    // Resolved only by its own commit: the first batch is still in flight.
    expect(settled).toEqual(["c1"]);
    calls[0]!.release();
    await Promise.all(first);
    await called(3);
    expect(calls[2]!.names).toEqual(["a2", "a3"]);
    calls[2]!.release();
    await Promise.all(later);
    expect(settled).toEqual(["c1", "a1", "b1", "a2", "a3"]);
  });

  it("runs an operation of unknown keys alone, after the batches in flight, and the later ones after it", async () => {
    const { calls, commit, called } = heldCommits();
    const writer = new GroupCommit<Op>(commit, options);
    const a = writer.submit({ name: "a1", keys: ["a"] });
    await called(1);
    const reset = writer.submit({ name: "any" });
    const b = writer.submit({ name: "b1", keys: ["b"] });
    // Nothing starts beside a batch while an operation of unknown keys waits ahead.
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toHaveLength(1);
    calls[0]!.release();
    await a;
    await called(2);
    expect(calls[1]!.names).toEqual(["any"]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(calls).toHaveLength(2);
    calls[1]!.release();
    await reset;
    await called(3);
    expect(calls[2]!.names).toEqual(["b1"]);
    calls[2]!.release();
    await b;
  });

  it("splits a burst with nothing in flight, so that its second part is committed beside the first", async () => {
    const { calls, commit, called } = heldCommits();
    const writer = new GroupCommit<Op>(commit, options);
    const all = Array.from({ length: 40 }, (_, i) => writer.submit({ name: `k${i}`, keys: [`k${i}`] }));
    await called(2);
    expect(calls.map((c) => c.names.length)).toEqual([20, 20]);
    for (const c of calls) c.release();
    await Promise.all(all);
  });
});
