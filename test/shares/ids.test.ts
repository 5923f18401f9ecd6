import { describe, expect, it } from "vitest";
import { MemoryShareStore } from "../../src/shares/memory.js";
import { isShareId, newShareId } from "../../src/shares/share.js";
import { EngineShares } from "../../src/shares/shares.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";

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

describe("the unshareable hook (incognito sessions)", () => {
  it("refuses a key it names with SESSION_INCOGNITO and makes no link", async () => {
    const store = new MemoryStore();
    await store.append("main:secretive", [{ type: "message", role: "user", content: "off the record" }], {
      init: { agent: "main", channel: "app_api", createdBy: "me" },
    });
    const links = new MemoryShareStore();
    const shares = new EngineShares(links, store, {
      now: () => 1,
      unshareable: (key) => key === "main:secretive",
    });
    await expect(shares.create("main:secretive")).rejects.toMatchObject({ code: "SESSION_INCOGNITO" });
    expect(await links.forKey("main:secretive")).toEqual([]);
    await store.close();
  });
});
