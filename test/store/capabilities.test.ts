import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { SearchResult } from "../../src/search/query.js";
import { searchStore } from "../../src/search/searchable.js";
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";
import { LogStore } from "../../src/store/log-store.js";
import { MemoryDriver } from "../../src/store/memory/memory-driver.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { capabilitiesOf, type StoreCapabilities } from "../../src/store/store.js";
import { hasLeases } from "../../src/turns/queue-types.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "sessiond-capabilities-"));
  dirs.push(dir);
  return dir;
};

const found: SearchResult = { hits: [], complete: true } as unknown as SearchResult;

/** A store of someone's own: it has a `search` method and `leases`, and declares what it is given. */
class OwnStore extends LogStore {
  readonly leases = { acquire: async () => ({}) };

  constructor(override readonly capabilities: StoreCapabilities) {
    super(new MemoryDriver());
  }

  async search(): Promise<SearchResult> {
    return found;
  }
}

describe("what a store can do is what it declares", () => {
  it("each backend declares search and the inbox it keeps", async () => {
    const stores = [
      new MemoryStore(),
      new SqliteStore({ path: join(tempDir(), "s.db") }),
      new JsonlStore({ path: tempDir() }),
    ];
    for (const store of stores) {
      expect(capabilitiesOf(store)).toEqual({ search: true, inbox: true });
      await store.close();
    }
  });

  it("a store that has the methods but declares nothing is not searched, nor leased", async () => {
    const silent = new OwnStore({});
    await expect(searchStore(silent, { text: "x" })).rejects.toMatchObject({ code: "SEARCH_UNAVAILABLE" });
    expect(hasLeases(silent)).toBe(false);
    const declared = new OwnStore({ search: true, leases: true });
    await expect(searchStore(declared, { text: "x" })).resolves.toBe(found);
    expect(hasLeases(declared)).toBe(true);
    await silent.close();
    await declared.close();
  });
});
