import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { IncognitoKeys } from "../../src/incognito/keys.js";
import { routeIncognito } from "../../src/incognito/store.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { runStoreContract } from "../../src/store/testing/contract.js";

// The routed store is the engine's: every key incognito, it must be a whole store in memory; none, the
// stored one unchanged (SQLite's contract, crash and second-process cases included).
runStoreContract({
  name: "incognito routing, every key incognito",
  persistent: false,
  open: async () => {
    const stored = new MemoryStore();
    return routeIncognito(stored, new IncognitoKeys(stored, () => true));
  },
});

runStoreContract({
  name: "incognito routing, no key incognito (SQLite)",
  persistent: true,
  open: async (dir) => {
    const stored = new SqliteStore({ path: join(dir, "sessiond.db") });
    return routeIncognito(stored, new IncognitoKeys(stored, () => false));
  },
});

describe("the routed store's lists", () => {
  it("page through stored and incognito sessions together, in order, each once", async () => {
    const stored = new MemoryStore();
    const store = routeIncognito(stored, new IncognitoKeys(stored, (key) => key.startsWith("secret:")));
    const init = { agent: "main", channel: "test", createdBy: "t" };
    for (let i = 0; i < 15; i++) {
      await store.append(
        `kept:${i}`,
        [{ type: "note", level: "info", code: "X", text: "k", ts: 1000 + i * 2 }],
        { init },
      );
      await store.append(
        `secret:${i}`,
        [{ type: "note", level: "info", code: "X", text: "s", ts: 1001 + i * 2 }],
        { init },
      );
    }
    expect((await stored.listSessions({ limit: 100 })).sessions).toHaveLength(15);
    for (const sort of ["created", "activity"] as const) {
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await store.listSessions({ sort, limit: 7, ...(cursor ? { cursor } : {}) });
        seen.push(...page.sessions.map((s) => s.key));
        cursor = page.nextCursor;
      } while (cursor);
      const all = (await store.listSessions({ sort, limit: 100 })).sessions.map((s) => s.key);
      expect(seen).toEqual(all);
      expect(new Set(seen).size).toBe(30);
    }
    const scanned = await store.scanSessions({ state: "active", limit: 20 });
    expect(scanned).toHaveLength(20);
    expect(scanned.map((s) => s.lastActivityAt)).toEqual([...scanned.map((s) => s.lastActivityAt)].sort());
    const secret = (await store.getSession("secret:3"))!;
    expect(await store.getSessionById(secret.id)).toMatchObject({ key: "secret:3" });
    expect(await stored.getSessionById(secret.id)).toBeUndefined();
    expect((await store.readEntries(secret.id)).map((e) => e.type)).toEqual(["note"]);
    await store.close();
  });
});
