import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PgSeenMessages } from "../../src/channels/seen/pg-seen.js";
import { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { type PostgresCluster, startPostgres } from "../support/postgres.js";

describe("seen messages in PostgreSQL", () => {
  let cluster: PostgresCluster;
  beforeAll(async () => {
    cluster = await startPostgres();
  }, 120_000);
  afterAll(async () => {
    await cluster?.remove();
  });

  it("are shared by two gateways' stores on one database: an id is taken by exactly one", async () => {
    const url = await cluster.createDatabase();
    const [a, b] = await Promise.all([PostgresStore.open({ url }), PostgresStore.open({ url })]);
    try {
      // Opened at once, as two gateways starting together do: both create the table.
      const [seenA, seenB] = await Promise.all([PgSeenMessages.open(a.pool), PgSeenMessages.open(b.pool)]);
      const ids = Array.from({ length: 20 }, (_, i) => `telegram:1:42:${i}`);
      const taken = await Promise.all(ids.flatMap((id) => [seenA.claim(id, 1000), seenB.claim(id, 1000)]));
      expect(taken.filter(Boolean)).toHaveLength(20);
      await seenA.forget("telegram:1:42:0");
      expect(await seenB.claim("telegram:1:42:0", 2000)).toBe(true);
    } finally {
      await a.close();
      await b.close();
    }
  }, 60_000);
});
