import { describe, expect, it } from "vitest";
import { isShareId, newShareId } from "../../src/shares/share.js";

describe("share ids", () => {
  it("are 24 base64url characters, all different, and never start with - (a command line would read an option)", () => {
    const ids = Array.from({ length: 2000 }, newShareId);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) {
      expect(id).toMatch(/^[A-Za-z0-9_][A-Za-z0-9_-]{23}$/);
      expect(isShareId(id)).toBe(true);
    }
  });

  it("refuse anything else before a read", () => {
    for (const id of [
      "",
      "a",
      "A".repeat(23),
      "A".repeat(25),
      `${"A".repeat(23)}/`,
      `${"A".repeat(23)}=`,
      "../".repeat(8),
    ]) {
      expect(isShareId(id)).toBe(false);
    }
  });
});
