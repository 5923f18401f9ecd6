import { expect, it } from "vitest";
import { LogStore } from "../../src/store/log-store.js";
import { MemoryDriver } from "../../src/store/memory/memory-driver.js";

it("a store over a driver that does not say it rewrites entries refuses an erasure instead of skipping it", async () => {
  const driver = new MemoryDriver();
  // A third-party driver written before `rewriteEntries` existed: it would ignore the change it does not know.
  Object.defineProperty(driver, "rewritesEntries", { value: undefined });
  const store = new LogStore(driver);
  const init = { agent: "main", channel: "cli", createdBy: "u1" };
  const { session } = await store.append("k", [{ type: "message", role: "user", content: "secret" }], {
    init,
  });
  await expect(
    store.eraseEntries(session.id, { bodies: new Map([[1, { type: "note", text: "erased" }]]) }),
  ).rejects.toMatchObject({ code: "NOT_SUPPORTED" });
  expect((await store.readEntries(session.id))[0]).toMatchObject({ type: "message", content: "secret" });
  await store.close();
});
