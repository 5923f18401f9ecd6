import { describe, expect, it } from "vitest";
import { runStoreContract } from "../../src/public/store-testing.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";

runStoreContract({ name: "memory", persistent: false, open: async () => new MemoryStore() });

describe("MemoryStore", () => {
  it("commits through the same group-commit writer as the stores on disk: a tick's appends are one batch", async () => {
    const store = new MemoryStore();
    const batches: number[] = [];
    store.observeCommits((operations) => batches.push(operations));
    const init = { agent: "main", channel: "cli", createdBy: "u1" };
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        store.append(`k${i % 3}`, [{ type: "message", role: "user", content: `m${i}` }], { init }),
      ),
    );
    expect(batches).toEqual([10]);
    // One batch, and still numbered per key as if one by one.
    expect(results.filter((r) => r.session.key === "k0").map((r) => r.entries[0]?.seq)).toEqual([1, 2, 3, 4]);
    await store.close();
  });
});
