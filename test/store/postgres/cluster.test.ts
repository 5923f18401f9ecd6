import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PostgresCluster, startPostgres } from "../../support/postgres.js";

describe("the throwaway PostgreSQL cluster", () => {
  let cluster: PostgresCluster;
  beforeAll(async () => {
    cluster = await startPostgres();
  });
  afterAll(() => cluster.remove());

  it("gives each test its own database, with fsync on, and keeps committed rows across a crash and restart", async () => {
    const url = await cluster.createDatabase();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rows } = await client.query<{ fsync: string; sc: string }>(
      "SELECT current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS sc",
    );
    expect(rows[0]).toEqual({ fsync: "on", sc: "on" });
    await client.query("CREATE TABLE t (n int)");
    await client.query("INSERT INTO t VALUES (1), (2)");
    await client.end();
    if (!cluster.restartable) return;
    await cluster.stop("immediate");
    const refused = new pg.Client({ connectionString: url });
    await expect(refused.connect()).rejects.toThrow();
    await cluster.start();
    const again = new pg.Client({ connectionString: url });
    await again.connect();
    const count = await again.query<{ n: string }>("SELECT count(*) AS n FROM t");
    expect(count.rows[0]?.n).toBe("2");
    await again.end();
  });
});
