import { describe, expect, it } from "vitest";
import { Lanes } from "../../src/turns/lanes.js";

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("Lanes", () => {
  it("runs work on one key one at a time, in arrival order", async () => {
    const lanes = new Lanes();
    const log: string[] = [];
    let running = 0;
    let maxRunning = 0;
    const work = (name: string) => async () => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      log.push(`start ${name}`);
      await new Promise((r) => setTimeout(r, 2));
      log.push(`end ${name}`);
      running--;
      return name;
    };
    const results = await Promise.all(["a", "b", "c", "d"].map((n) => lanes.run("k", work(n))));
    expect(results).toEqual(["a", "b", "c", "d"]);
    expect(maxRunning).toBe(1);
    expect(log).toEqual(["a", "b", "c", "d"].flatMap((n) => [`start ${n}`, `end ${n}`]));
  });

  it("runs different keys in parallel", async () => {
    const lanes = new Lanes();
    const gate = deferred();
    const started: string[] = [];
    const a = lanes.run("a", async () => {
      started.push("a");
      await gate.promise;
    });
    const b = lanes.run("b", async () => {
      started.push("b");
    });
    await b;
    expect(started).toEqual(["a", "b"]);
    expect(lanes.depth("a")).toBe(1);
    gate.resolve();
    await a;
    expect(lanes.depth("a")).toBe(0);
  });

  it("refuses work beyond the queue bound with SESSION_BUSY and accepts it again once drained", async () => {
    const lanes = new Lanes({ maxQueue: 2 });
    const gate = deferred();
    const accepted = [0, 1, 2].map(() => lanes.run("k", () => gate.promise));
    expect(lanes.depth("k")).toBe(3);
    await expect(lanes.run("k", async () => 1)).rejects.toMatchObject({
      code: "SESSION_BUSY",
      details: { key: "k", queued: 3 },
    });
    await expect(lanes.run("other", async () => "free")).resolves.toBe("free");
    gate.resolve();
    await Promise.all(accepted);
    await expect(lanes.run("k", async () => "again")).resolves.toBe("again");
  });

  it("keeps the lane moving after a turn throws", async () => {
    const lanes = new Lanes();
    const failing = lanes.run("k", async () => {
      throw new Error("boom");
    });
    const next = lanes.run("k", async () => "next");
    await expect(failing).rejects.toThrow("boom");
    await expect(next).resolves.toBe("next");
    expect(lanes.active().size).toBe(0);
  });

  it("drains: waits for everything accepted", async () => {
    const lanes = new Lanes();
    let done = 0;
    for (const key of ["a", "a", "b"]) {
      lanes.run(key, async () => {
        await new Promise((r) => setTimeout(r, 3));
        done++;
      });
    }
    await lanes.drain();
    expect(done).toBe(3);
  });

  it("runAll holds every key's lane: work on either key waits for it, and it waits for theirs", async () => {
    const lanes = new Lanes();
    const order: string[] = [];
    const gate = deferred();
    const onB = lanes.run("b", async () => {
      await gate.promise;
      order.push("turn b");
    });
    const both = lanes.runAll(["b", "a"], async () => {
      order.push("both");
    });
    const onA = lanes.run("a", async () => {
      order.push("turn a");
    });
    gate.resolve();
    await Promise.all([onB, both, onA]);
    expect(order).toEqual(["turn b", "both", "turn a"]);
  });
});
