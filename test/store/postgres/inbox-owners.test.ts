import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../../src/engine.js";
import type { Envelope } from "../../../src/model/envelope.js";
import { PostgresStore } from "../../../src/store/postgres/postgres-store.js";
import type { RecoveryReport } from "../../../src/turns/inbox-recovery.js";
import { HeldRuntime } from "../../support/held-runtime.js";
import { type PostgresCluster, startPostgres } from "../../support/postgres.js";

let cluster: PostgresCluster;
const opened: Array<{ close(): Promise<void> }> = [];
beforeAll(async () => {
  cluster = await startPostgres();
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((o) => o.close().catch(() => {})));
});
afterAll(async () => {
  await cluster?.remove();
});

const envelope = (text: string): Envelope => ({
  channel: "telegram",
  chat: { type: "direct", id: "42" },
  sender: { id: "42" },
  text,
});

async function storeOn(url: string, leaseTtlMs = 60_000): Promise<PostgresStore> {
  const store = await PostgresStore.open({ url, leaseTtlMs });
  opened.push(store);
  return store;
}

describe("PostgreSQL inbox owners", () => {
  it("takes over only a dead owner's items, each by one process, and fences the old owner out", async () => {
    const url = await cluster.createDatabase();
    const [a, b, c] = await Promise.all([storeOn(url), storeOn(url), storeOn(url)]);
    const inboxA = a.inbox();
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      ids.push((await inboxA.admit({ key: `k${i % 3}`, envelope: envelope(`m${i}`), at: i })).item.id);
    }
    // a lives: nobody takes anything of it.
    expect(await b.inbox().takeOver()).toEqual([]);
    // A clean stop deletes its heartbeat: its items are orphans at once, and b and c race for them.
    await a.close();
    const [byB, byC] = await Promise.all([b.inbox().takeOver(), c.inbox().takeOver()]);
    const taken = [...byB, ...byC].map((item) => item.id);
    expect(taken.sort()).toEqual([...ids].sort());
    expect(new Set(taken).size).toBe(ids.length);
    // Each process got them in admission order.
    for (const got of [byB, byC])
      expect(got.map((i) => i.id)).toEqual(ids.filter((id) => got.some((g) => g.id === id)));
    // The new owner moves them on; nothing of another's moves.
    const mine = byB.length > 0 ? b.inbox() : c.inbox();
    const theirs = byB.length > 0 ? c.inbox() : b.inbox();
    const first = (byB[0] ?? byC[0])!;
    expect(await theirs.start([first.id], 100)).toBe(false);
    expect(await theirs.transition(first.id, "done", 100)).toBe(false);
    expect(await mine.start([first.id], 100)).toBe(true);
    expect(await mine.transition(first.id, "done", 101)).toBe(true);
  });

  it("runs on a live engine the queued input of an engine whose heartbeat lapsed, once: the paused one gets TURN_TAKEN_OVER", async () => {
    const url = await cluster.createDatabase();
    const dataDir = mkdtempSync(join(tmpdir(), "sessiond-owners-"));
    const heldA = new HeldRuntime();
    const heldB = new HeldRuntime();
    // a renews its heartbeat once an hour (so it stays lapsed once lapsed); b every 2 s.
    const a = await createEngine(
      { store: { backend: "postgres", url, leaseTtlMs: 3_600_000 }, dataDir },
      { runtimes: new Map([["main", heldA.runtime]]) },
    );
    opened.push(a);
    const b: Engine = await createEngine(
      { store: { backend: "postgres", url, leaseTtlMs: 6000 }, dataDir },
      { runtimes: new Map([["main", heldB.runtime]]) },
    );
    opened.push(b);
    await a.recover();
    let tookOver!: (report: RecoveryReport) => void;
    const taken = new Promise<RecoveryReport>((resolve) => {
      tookOver = resolve;
    });
    await b.recover((report) => tookOver(report));
    // b holds the key's lease with a turn; a's input on that key waits in a for the lease.
    const hold = await b.start(envelope("hold"));
    await heldB.started(1);
    const second = await a.start(envelope("second"));
    const secondFailed = second.result.then(
      () => undefined,
      (error: unknown) => error,
    );
    // a "pauses": its heartbeat lapses in the database, as if it had not renewed it in time.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(
      "UPDATE inbox_owners SET expires_at = clock_timestamp() - interval '1 second' WHERE owner = (SELECT owner FROM inbox WHERE id = $1)",
      [second.id],
    );
    await client.end();
    expect(await taken).toEqual({ requeued: 1, answered: 0, interrupted: 0 });
    heldB.runs[0]!.release();
    await hold.result;
    await heldB.started(2);
    expect(heldB.runs[1]!.input).toBe("second");
    heldB.runs[1]!.release();
    // a gets the lease once b frees it: its input is b's now, so it runs nothing.
    expect(await secondFailed).toMatchObject({ code: "TURN_TAKEN_OVER" });
    expect(heldA.runs).toEqual([]);
    const entries = await b.history("telegram:42");
    expect(entries.filter((e) => e.type === "message" && e.role === "user").length).toBe(2);
  });
});
