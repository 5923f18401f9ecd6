import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { type PostgresCluster, startPostgres } from "../../support/postgres.js";

let cluster: PostgresCluster;
beforeAll(async () => {
  cluster = await startPostgres();
});
afterAll(() => cluster?.remove());

const init = { agent: "main", channel: "web", createdBy: "test" };
const msg = (content: string, idempotencyKey: string) => ({
  type: "message" as const,
  role: "user" as const,
  content,
  idempotencyKey,
});

/** The store, counting the idempotency lookups it sends to the server. */
async function counted(url: string) {
  const store = await PostgresStore.open({ url });
  const lookups = { count: 0 };
  const query = store.pool.query.bind(store.pool) as (...args: unknown[]) => unknown;
  (store.pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args) => {
    if (typeof args[0] === "string" && args[0].includes("idem_key = ANY")) lookups.count++;
    return query(...args);
  };
  return { store, lookups };
}

describe("idempotency lookups on PostgreSQL", () => {
  it("are answered from a session's cached context when it holds every entry, and still deduplicate", async () => {
    const url = await cluster.createDatabase();
    const { store, lookups } = await counted(url);
    try {
      await store.append("web:a", [msg("one", "k1")], { init });
      await store.loadContext("web:a");
      lookups.count = 0;
      const two = await store.append("web:a", [msg("two", "k2")]);
      const again = await store.append("web:a", [msg("one, redelivered", "k1")]);
      expect(lookups.count).toBe(0);
      expect(two.created).toEqual([true]);
      expect(again.created).toEqual([false]);
      expect(again.entries[0]).toMatchObject({ seq: 1, content: "one" });
      expect((await store.getSession("web:a"))?.entryCount).toBe(2);
    } finally {
      await store.close();
    }
  });

  it("go to the server once another process wrote the session, and find what it stored", async () => {
    const url = await cluster.createDatabase();
    const { store, lookups } = await counted(url);
    const other = await PostgresStore.open({ url });
    try {
      await store.append("web:a", [msg("one", "k1")], { init });
      await store.loadContext("web:a");
      await other.append("web:a", [msg("two, elsewhere", "k2")]);
      // Whether or not its NOTIFY was heard yet: a commit planned on the stale cache is refused, planned again.
      lookups.count = 0;
      const again = await store.append("web:a", [msg("two, redelivered here", "k2")]);
      expect(again.created).toEqual([false]);
      expect(again.entries[0]).toMatchObject({ seq: 2, content: "two, elsewhere" });
      expect(lookups.count).toBeGreaterThan(0);
      expect((await store.getSession("web:a"))?.entryCount).toBe(2);
    } finally {
      await other.close();
      await store.close();
    }
  });
});
