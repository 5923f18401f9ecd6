import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isSessiondError } from "../../../src/model/errors.js";
import type { Session } from "../../../src/model/session.js";
import type { WriteGroup } from "../../../src/store/driver.js";
import { commitAlone } from "../../../src/store/postgres/batch-commit.js";
import { InboxOwner } from "../../../src/store/postgres/inbox-owners.js";
import { PgNotifications } from "../../../src/store/postgres/notifications.js";
import { openPool } from "../../../src/store/postgres/pool.js";
import { PostgresDriver } from "../../../src/store/postgres/postgres-driver.js";
import { PostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { cloneSession, planAppend } from "../../../src/store/session-log.js";
import { startTestGateway } from "../../gateway/http/helpers.js";
import { type PostgresCluster, startPostgres } from "../../support/postgres.js";

let cluster: PostgresCluster;
beforeAll(async () => {
  cluster = await startPostgres();
});
afterAll(() => cluster?.remove());

const init = { agent: "main", channel: "driver", createdBy: "u" };
const msg = (content: string) => ({ type: "message" as const, role: "user" as const, content });

/** Resolves when `store` hears another process append to `key` up to `seq`. */
function heard(store: PostgresStore, key: string, seq: number): Promise<void> {
  return new Promise((resolve, reject) => {
    store
      .onForeignAppend((change) => {
        if (change.key === key && change.toSeq >= seq) resolve();
      })
      .catch(reject);
  });
}

/** An append group as the core plans it: one message after what `session` holds. */
function appendTo(
  session: Session,
  content: string,
  lastSeq = session.entryCount,
): WriteGroup & { next: Session } {
  const next = cloneSession(session);
  const plan = planAppend(next, [msg(content)], { findIdempotent: () => undefined }, Date.now());
  return {
    changes: [{ kind: "appendEntries", session: next, entries: plan.fresh }],
    expects: [{ kind: "session", key: session.key, sessionId: session.id, lastSeq }],
    next,
  };
}

describe("the PostgreSQL driver under the log core", () => {
  it("drops what its caches hold of a key another process changed, from that process's NOTIFY", async () => {
    const url = await cluster.createDatabase();
    const a = await PostgresStore.open({ url });
    const b = await PostgresStore.open({ url });
    await a.append("k", [msg("a1")], { init });
    expect((await a.loadContext("k"))?.entries).toHaveLength(1); // now in a's caches

    const appended = heard(a, "k", 2);
    await b.append("k", [msg("b1")]);
    await appended;
    expect((await a.getSession("k"))?.entryCount).toBe(2);
    expect((await a.loadContext("k"))?.entries.map((e) => (e as { content?: string }).content)).toEqual([
      "a1",
      "b1",
    ]);

    // A reset sends no append: a later commit of b's, delivered after it, tells a has heard it.
    const { current } = await b.reset("k", "api");
    const barrier = heard(a, "barrier", 1);
    await b.append("barrier", [msg("x")], { init });
    await barrier;
    expect((await a.getSession("k"))?.id).toBe(current.id);
    const next = await a.append("k", [msg("a2")]);
    expect(next.session).toMatchObject({ id: current.id, generation: 2, entryCount: 1 });
    await Promise.all([a.close(), b.close()]);
  });

  it("commits a batch's good groups and refuses, alone, a stale one, one whose lease moved on and one that fails", async () => {
    const url = await cluster.createDatabase();
    const store = await PostgresStore.open({ url });
    const [k1, k2, k3] = await Promise.all(
      ["k1", "k2", "k3"].map(async (key) => (await store.append(key, [msg("0")], { init })).session),
    );
    await store.close();
    const pool = await openPool(url, 2);
    const driver = new PostgresDriver(
      pool,
      new PgNotifications(pool),
      "test",
      new InboxOwner(pool, "test", 60_000),
    );

    const g1 = appendTo(k1!, "1");
    const g2 = appendTo(k2!, "stale", 5); // another writer moved k2 on since
    const g3 = { ...appendTo(k3!, "fenced"), fence: { key: "k3", epoch: 99 } }; // no such lease
    const g4 = appendTo(g1.next, "2"); // planned on g1
    const g5 = appendTo(g2.next, "after stale"); // planned on g2
    const outcomes = await driver.commit([g1, g2, g3, g4, g5], true);
    expect(outcomes[0]).toEqual({ ok: true });
    expect(outcomes[1]).toEqual({ ok: false, stale: true });
    expect(isSessiondError((outcomes[2] as { error: unknown }).error, "LEASE_LOST")).toBe(true);
    expect(outcomes[3]).toEqual({ ok: true });
    expect(outcomes[4]).toEqual({ ok: false, stale: true });

    // A new session whose id is taken: the batch's statement fails, the batch is redone group by group.
    const clash: WriteGroup = {
      changes: [{ kind: "createSession", session: { ...cloneSession(k1!), key: "n1" } }],
      expects: [{ kind: "noSession", key: "n1", lastGeneration: 0 }],
    };
    const g6 = appendTo(g4.next, "3");
    const again = await driver.commit([clash, g6], true);
    expect(again).toEqual([{ ok: false, stale: true }, { ok: true }]);

    const reopened = await PostgresStore.open({ url });
    expect((await reopened.getSession("k1"))?.entryCount).toBe(4);
    expect((await reopened.getSession("k2"))?.entryCount).toBe(1);
    expect((await reopened.getSession("k3"))?.entryCount).toBe(1);
    expect(await reopened.getSession("n1")).toBeUndefined();
    const k1Entries = await reopened.readEntries(k1!.id);
    expect(k1Entries.map((e) => (e as { content?: string }).content)).toEqual(["0", "1", "2", "3"]);
    await reopened.close();
    await driver.close();
  });

  it("commits held keys on the hold's connection, and ends a hold that has only some of a batch's keys first", async () => {
    const url = await cluster.createDatabase();
    const store = await PostgresStore.open({ url });
    const [k1, k2] = await Promise.all(
      ["k1", "k2"].map(async (key) => (await store.append(key, [msg("0")], { init })).session),
    );
    await store.close();
    const pool = await openPool(url, 4);
    const driver = new PostgresDriver(
      pool,
      new PgNotifications(pool),
      "test",
      new InboxOwner(pool, "test", 60_000),
    );
    // Held: another connection's write to k1 waits until the held commit is over.
    const release = await driver.hold(["k1"]);
    const g1 = appendTo(k1!, "1");
    const other = pool.query("UPDATE sessions SET title = 'other' WHERE key = 'k1' RETURNING entry_count");
    expect(await driver.commit([g1], true)).toEqual([{ ok: true }]);
    release();
    expect((await other).rows).toEqual([{ entry_count: 2 }]);
    // A batch that also writes k2: the hold on k1 alone is rolled back before it commits elsewhere
    // (else the commit would wait for the hold's lock, and the hold for the commit).
    const partial = await driver.hold(["k1"]);
    expect(await driver.commit([appendTo(g1.next, "2"), appendTo(k2!, "1")], true)).toEqual([
      { ok: true },
      { ok: true },
    ]);
    partial();
    const counts = await pool.query("SELECT key, entry_count FROM sessions ORDER BY key");
    expect(counts.rows).toEqual([
      { key: "k1", entry_count: 3 },
      { key: "k2", entry_count: 2 },
    ]);
    await driver.close();
  });

  it("writes a batch of appends to stored sessions as one statement, or nothing when one no longer holds", async () => {
    const url = await cluster.createDatabase();
    const store = await PostgresStore.open({ url });
    const [k1, k2] = await Promise.all(
      ["k1", "k2"].map(async (key) => (await store.append(key, [msg("0")], { init })).session),
    );
    await store.close();
    const pool = await openPool(url, 1);
    const client = await pool.connect();
    try {
      const g1 = appendTo(k1!, "1");
      const g2 = appendTo(g1.next, "2");
      expect(await commitAlone(client, [g1, g2, appendTo(k2!, "1")], "test")).toEqual([
        { ok: true },
        { ok: true },
        { ok: true },
      ]);
      // k2 has moved on to 2 entries: the whole statement is refused, k1's append included.
      const refused = commitAlone(client, [appendTo(g2.next, "3"), appendTo(k2!, "stale")], "test");
      await expect(refused).rejects.toMatchObject({ code: "40001" });
      const fenced = commitAlone(
        client,
        [{ ...appendTo(g2.next, "3"), fence: { key: "k1", epoch: 1 } }],
        "test",
      );
      await expect(fenced).rejects.toMatchObject({ code: "40001" });
      // Not of that kind (a new session): the caller takes the careful way.
      const fresh: WriteGroup = {
        changes: [{ kind: "createSession", session: { ...cloneSession(k1!), id: "x", key: "new" } }],
        expects: [{ kind: "noSession", key: "new", lastGeneration: 0 }],
      };
      expect(await commitAlone(client, [fresh], "test")).toBeUndefined();
      const { rows } = await client.query<{ key: string; entry_count: number; n: string }>(
        `SELECT s.key, s.entry_count, (SELECT count(*) FROM entries e WHERE e.sid = s.sid) AS n
         FROM sessions s ORDER BY s.key`,
      );
      expect(rows.map((r) => [r.key, r.entry_count, Number(r.n)])).toEqual([
        ["k1", 3, 3],
        ["k2", 2, 2],
      ]);
    } finally {
      client.release();
      await pool.end();
    }
  });
});

describe("batch fallbacks", () => {
  const SECRET = "ghp_16C7e42F292c6912E7710c838347Ae178B4a";
  /** Makes every one-statement batch fail on the server with an error that quotes a secret. */
  const breakOneStatementPath = (pool: import("pg").Pool) =>
    pool.query(`CREATE OR REPLACE FUNCTION sessiond_expect(ok boolean) RETURNS boolean LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'forced failure with ${SECRET}'; END $$`);

  it("counts each batch that fell back from the one-statement path and reports the first, redacted", async () => {
    const reported: Array<{ code?: string; message: string }> = [];
    const store = await PostgresStore.open({
      url: await cluster.createDatabase(),
      onBatchFallback: (f) => reported.push(f),
    });
    try {
      await store.append("k", [msg("first")], { init });
      expect(store.batchFallbacks()).toEqual({ count: 0 });
      await breakOneStatementPath(store.pool);
      for (let i = 0; i < 3; i++) await store.append("k", [msg(`after ${i}`)]);
      // Every append still committed, the slower way.
      expect((await store.readEntries((await store.getSession("k"))!.id)).map((e) => e.seq)).toEqual([
        1, 2, 3, 4,
      ]);
      const stats = store.batchFallbacks();
      expect(stats.count).toBe(3);
      expect(reported).toHaveLength(1);
      expect(stats.first).toEqual(reported[0]);
      expect(reported[0]!.code).toBe("P0001");
      expect(reported[0]!.message).toContain("forced failure with [redacted]");
      expect(reported[0]!.message).not.toContain(SECRET);
    } finally {
      await store.close();
    }
  });

  it("exposes the count as sessiond_store_batch_fallbacks_total on /metrics", async () => {
    const gw = await startTestGateway({
      store: { backend: "postgres", url: await cluster.createDatabase() },
    });
    const warned = new Promise<Error>((resolve) => {
      const heard = (warning: Error & { code?: string }) => {
        if (warning.code !== "SESSIOND_PG_BATCH_FALLBACK") return;
        process.off("warning", heard);
        resolve(warning);
      };
      process.on("warning", heard);
    });
    try {
      const store = gw.engine.store as PostgresStore;
      await store.append("k", [msg("first")], { init });
      await breakOneStatementPath(store.pool);
      await store.append("k", [msg("second")]);
      await store.append("k", [msg("third")]);
      const text = await (await gw.api("/metrics")).text();
      expect(text).toMatch(/^sessiond_store_batch_fallbacks_total 2$/m);
      const warning = await warned;
      expect(warning.message).toContain("[redacted]");
      expect(warning.message).not.toContain(SECRET);
    } finally {
      await gw.stop();
    }
  });
});
