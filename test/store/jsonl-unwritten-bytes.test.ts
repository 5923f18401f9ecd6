import { describe, expect, it } from "vitest";
import type { Tracked } from "../../src/store/jsonl/directory-scan.js";
import { UnwrittenBytes } from "../../src/store/jsonl/unwritten-bytes.js";

const tracked = (id: string) =>
  ({ session: { id }, file: `${id}.jsonl`, foreign: false, size: 0, mtimeMs: 0 }) as unknown as Tracked;
const ids = (queued: Array<{ tracked: Tracked }>) => queued.map((q) => q.tracked.session.id).sort();

describe("bytes waiting for their session files", () => {
  it("are due once they have waited the given number of batches, or their session holds too many", () => {
    const unwritten = new UnwrittenBytes(100, 10_000);
    const a = tracked("a");
    const b = tracked("b");
    const c = tracked("c");
    unwritten.nextBatch();
    unwritten.add(a, Buffer.alloc(10));
    unwritten.nextBatch();
    unwritten.add(b, Buffer.alloc(10));
    unwritten.add(c, Buffer.alloc(60));
    unwritten.add(c, Buffer.alloc(60));
    expect(ids(unwritten.takeDue(1))).toEqual(["a", "c"]);
    expect(unwritten.bytesOf("b")).toBe(10);
    expect(unwritten.takeDue(2)).toEqual([]);
    unwritten.nextBatch();
    expect(ids(unwritten.takeDue(1))).toEqual(["b"]);
    expect(unwritten.size).toBe(0);
  });

  it("are all due once the sessions together hold the total, counting what a failed write put back", () => {
    const unwritten = new UnwrittenBytes(1_000, 100);
    for (const id of ["a", "b", "c"]) unwritten.add(tracked(id), Buffer.alloc(30));
    expect(unwritten.takeDue(50)).toEqual([]);
    const [a] = unwritten.takeAll().filter((q) => q.tracked.session.id === "a");
    unwritten.add(tracked("b"), Buffer.alloc(30));
    // A write of a's 30 bytes stopped after 10: 20 go back, and the total is 50 again.
    unwritten.putBack(a!, 10);
    expect(unwritten.bytesOf("a")).toBe(20);
    expect(unwritten.takeDue(50)).toEqual([]);
    unwritten.add(tracked("c"), Buffer.alloc(50));
    expect(ids(unwritten.takeDue(50))).toEqual(["a", "b", "c"]);
  });
});
