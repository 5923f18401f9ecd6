import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEngine } from "../../../src/engine.js";
import { runFenced } from "../../../src/store/fence.js";
import { PostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { type PostgresCluster, startPostgres } from "../../support/postgres.js";

let cluster: PostgresCluster;
beforeAll(async () => {
  cluster = await startPostgres();
});
afterAll(() => cluster?.remove());

const init = { agent: "main", channel: "lease", createdBy: "u" };
const msg = (content: string) => ({ type: "message" as const, role: "user" as const, content });

/** Two stores on one database: two holders, as two processes are. */
async function twoStores(ttlMs = 600_000): Promise<[PostgresStore, PostgresStore, string]> {
  const url = await cluster.createDatabase();
  return [
    await PostgresStore.open({ url, leaseTtlMs: ttlMs }),
    await PostgresStore.open({ url, leaseTtlMs: ttlMs }),
    url,
  ];
}

describe("leases per key (PostgreSQL)", () => {
  it("run one turn per key across two engines on one database, each engine's turns in order", async () => {
    const [a, b] = await twoStores();
    const engines = await Promise.all(
      [a, b].map((store) => createEngine({ store, titles: { enabled: false } })),
    );
    let running = 0;
    let overlap = 0;
    const seen: string[] = [];
    const envelope = (text: string) => ({
      channel: "telegram",
      chat: { type: "direct" as const, id: "7" },
      sender: { id: "7" },
      text,
    });
    const turns = Array.from({ length: 20 }, (_, i) =>
      engines[i % 2]!.turnWith(envelope(`${i % 2}:${i}`), async (context) => {
        running++;
        if (running > 1) overlap++;
        seen.push(context.input.content);
        // Long enough (a few round trips to the server) for the other engine to start one meanwhile.
        for (let n = 0; n < 10; n++) await a.getSession("telegram:7");
        running--;
        return "ok";
      }),
    );
    await Promise.all(turns);
    expect(overlap).toBe(0);
    expect(seen).toHaveLength(20);
    for (const side of ["0", "1"]) {
      const mine = seen.filter((s) => s.startsWith(`${side}:`)).map((s) => Number(s.split(":")[1]));
      expect(mine).toEqual([...mine].sort((x, y) => x - y));
    }
    expect((await engines[0]!.history("telegram:7")).filter((e) => e.type === "message")).toHaveLength(40);
    await Promise.all(engines.map((e) => e.close()));
  });

  it("free and renew without waiting for the WAL, and leave the pooled connection synchronous after", async () => {
    const url = await cluster.createDatabase();
    const store = await PostgresStore.open({ url, leaseTtlMs: 150, poolSize: 2 });
    try {
      const fence = await store.leases.acquire("k");
      // Renewed every 50 ms: twice at least, on the one connection the LISTEN leaves in the pool.
      await new Promise((resolve) => setTimeout(resolve, 160));
      const [held] = await store.pool
        .query<{ holder: string | null; live: boolean }>(
          "SELECT holder, expires_at > clock_timestamp() AS live FROM leases WHERE key = 'k'",
        )
        .then((r) => r.rows);
      expect(held).toEqual({ holder: store.leases.holder, live: true });
      await store.leases.release(fence);
      const rows = (
        await store.pool.query<{ holder: string | null; sc: string }>(
          "SELECT holder, current_setting('synchronous_commit') AS sc FROM leases WHERE key = 'k'",
        )
      ).rows;
      expect(rows).toEqual([{ holder: null, sc: "on" }]);
      await store.append("k", [msg("after")], { init });
      const [{ sc }] = (await store.pool
        .query<{ sc: string }>("SHOW synchronous_commit")
        .then((r) => r.rows.map((row) => ({ sc: Object.values(row)[0] as string })))) as [{ sc: string }];
      expect(sc).toBe("on");
    } finally {
      await store.close();
    }
  });

  it("wake a waiter in another process when the holder frees the key (NOTIFY, not the TTL)", async () => {
    // A TTL far beyond the test's timeout: only the release's NOTIFY can let the waiter in.
    const [a, b] = await twoStores(3_600_000);
    const held = await a.leases.acquire("k:wake");
    let bHas = false;
    const waiting = b.leases.acquire("k:wake").then((fence) => {
      bHas = true;
      return fence;
    });
    await a.getSession("k:wake"); // a round trip: b has tried and is waiting
    expect(bHas).toBe(false);
    await a.leases.release(held);
    const taken = await waiting;
    expect(taken.epoch).toBe(held.epoch + 1);
    await b.leases.release(taken);
    await Promise.all([a.close(), b.close()]);
  });

  it("fence every append: a holder whose lease was taken over stores nothing and gets LEASE_LOST", async () => {
    const [a, b, url] = await twoStores();
    await a.append("k:fence", [msg("before")], { init });
    const stale = await a.leases.acquire("k:fence");
    await runFenced(stale, () => a.append("k:fence", [msg("while held")]));
    // `a` pauses past its lease (no renewal reaches the server): the lease lapses, `b` takes over.
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(
      "UPDATE leases SET expires_at = clock_timestamp() - interval '1 second' WHERE key = $1",
      ["k:fence"],
    );
    await admin.end();
    const fresh = await b.leases.acquire("k:fence");
    expect(fresh.epoch).toBe(stale.epoch + 1);
    await expect(runFenced(stale, () => a.append("k:fence", [msg("late")]))).rejects.toMatchObject({
      code: "LEASE_LOST",
      details: { outcome: "not-written" },
    });
    await runFenced(fresh, () => b.append("k:fence", [msg("from b")]));
    const session = (await b.getSession("k:fence"))!;
    const contents = (await b.readEntries(session.id)).map((e) =>
      e.type === "message" ? e.content : e.type,
    );
    expect(contents).toEqual(["before", "while held", "from b"]);
    await b.leases.release(fresh);
    await Promise.all([a.close(), b.close()]);
  });

  it("let a crashed holder's lease lapse after the TTL, then hand the key on with the next epoch", async () => {
    const [a, b] = await twoStores(300);
    const held = await a.leases.acquire("k:crash");
    a.leases.close(); // it stops renewing, as a killed process does, and never releases
    const next = await b.leases.acquire("k:crash");
    expect(next.epoch).toBe(held.epoch + 1);
    await b.leases.release(next);
    await Promise.all([a.close(), b.close()]);
  });
});
