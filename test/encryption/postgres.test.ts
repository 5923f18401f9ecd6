import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { type PostgresCluster, startPostgres } from "../support/postgres.js";
import { sealedStoreContract } from "./sealed-contract.js";

let cluster: PostgresCluster;
let url = "";

beforeAll(async () => {
  cluster = await startPostgres();
}, 120_000);
afterAll(async () => {
  await cluster?.remove();
});

async function withClient<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}
const tables = (client: pg.Client) =>
  client
    .query<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
    )
    .then((r) => r.rows.map((row) => row.name));

sealedStoreContract("PostgreSQL", {
  fresh: async () => {
    url = await cluster.createDatabase();
  },
  open: (encryption) => PostgresStore.open({ url, ...(encryption ? { encryption } : {}) }),
  // Every row of every table, read as text.
  holding: (word) =>
    withClient(async (client) => {
      const found: string[] = [];
      for (const name of await tables(client)) {
        const rows = await client.query(`SELECT count(*)::int AS n FROM "${name}" t WHERE t::text LIKE $1`, [
          `%${word}%`,
        ]);
        if ((rows.rows[0] as { n: number }).n > 0) found.push(name);
      }
      return found;
    }),
  stored: (sessionId, seq) =>
    withClient(async (client) => {
      const session = await client.query<{ sid: string; data_key: string | null }>(
        "SELECT sid, data_key FROM sessions WHERE id = $1",
        [sessionId],
      );
      const row = session.rows[0];
      if (!row) return { body: undefined, dataKey: undefined };
      const entry = await client.query<{ data: string }>(
        "SELECT data FROM entries WHERE sid = $1 AND seq = $2",
        [row.sid, seq],
      );
      return { body: entry.rows[0]?.data, dataKey: row.data_key ?? undefined };
    }),
  damage: (sessionId, seq) =>
    withClient(async (client) => {
      const where = "sid = (SELECT sid FROM sessions WHERE id = $1) AND seq = $2";
      const { rows } = await client.query<{ data: string }>(`SELECT data FROM entries WHERE ${where}`, [
        sessionId,
        seq,
      ]);
      const body = JSON.parse(rows[0]!.data) as { sealed: string };
      body.sealed = body.sealed.slice(0, 30) + (body.sealed[30] === "A" ? "B" : "A") + body.sealed.slice(31);
      await client.query(`UPDATE entries SET data = $3 WHERE ${where}`, [
        sessionId,
        seq,
        JSON.stringify(body),
      ]);
    }),
  dataKeys: () =>
    withClient(async (client) => {
      const { rows } = await client.query<{ id: string; dataKey: string }>(
        'SELECT id, data_key AS "dataKey" FROM sessions WHERE data_key IS NOT NULL',
      );
      return rows;
    }),
  // The rows of the tables that hold sessions and their entries (leases and owners' heartbeats are not data).
  fingerprint: () =>
    withClient(async (client) => {
      const parts: string[] = [];
      for (const name of ["sessions", "entries", "inbox"]) {
        const { rows } = await client.query<{ h: string | null }>(
          `SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) AS h FROM "${name}" t`,
        );
        parts.push(`${name}:${rows[0]?.h}`);
      }
      return parts.join(" ");
    }),
  sealsInbox: true,
  cleanup: () => undefined,
});
