import { describe, expect, it } from "vitest";
import { RecentIds } from "../../src/channels/recent-ids.js";

describe("RecentIds", () => {
  it("remembers ids until their bytes pass the bound, then forgets the oldest first", () => {
    const recent = new RecentIds(10);
    expect(recent.add("aaaa")).toBe(true);
    expect(recent.add("aaaa")).toBe(false);
    expect(recent.add("bbbb")).toBe(true);
    // A check does not make an id newer: "aaaa" is still the oldest.
    expect(recent.has("aaaa")).toBe(true);
    expect(recent.add("cccc")).toBe(true);
    expect(recent.has("aaaa")).toBe(false);
    expect(recent.has("bbbb")).toBe(true);
    expect(recent.has("cccc")).toBe(true);
  });

  it("forgets an id on delete, so the same id is new again", () => {
    const recent = new RecentIds();
    recent.add("m-1");
    recent.delete("m-1");
    expect(recent.has("m-1")).toBe(false);
    expect(recent.add("m-1")).toBe(true);
  });
});
