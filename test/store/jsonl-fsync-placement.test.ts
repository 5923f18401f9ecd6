import { describe, expect, it } from "vitest";
import { FsyncPlacement } from "../../src/store/jsonl/fsync-placement.js";

describe("JSONL journal fsync placement", () => {
  it("goes off the event loop until a wait there takes no appends, then looks again every so often", () => {
    const placement = new FsyncPlacement(4);
    expect(placement.next()).toBe(false);
    placement.waited(true);
    expect(placement.next()).toBe(false);
    placement.waited(false);
    expect([1, 2, 3, 4, 5, 6, 7, 8].map(() => placement.next())).toEqual([
      true,
      true,
      true,
      false,
      true,
      true,
      true,
      false,
    ]);
    placement.waited(true);
    expect(placement.next()).toBe(false);
  });
});
