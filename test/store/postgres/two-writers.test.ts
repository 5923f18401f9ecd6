import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { type PostgresCluster, startPostgres } from "../../support/postgres.js";
import { readyChild } from "../../support/ready-child.js";

let cluster: PostgresCluster;
beforeAll(async () => {
  cluster = await startPostgres();
});
afterAll(() => cluster?.remove());

/** Starts the race child, resolves `ready` once it has opened the store, `exit` with its stdout. */
const child = (args: string[]) => readyChild(new URL("./append-race-child.ts", import.meta.url), args);

describe("PostgreSQL: processes appending to the same keys", () => {
  it("store every append of three processes hammering four keys, none refused as STORE_BUSY", async () => {
    const url = await cluster.createDatabase();
    // The schema first, so the children do not race to migrate.
    await (await PostgresStore.open({ url })).close();
    const rounds = 60;
    const keys = 4;
    const children = ["a", "b", "c"].map((tag) => child([url, tag, String(rounds), String(keys)]));
    await Promise.all(children.map((c) => c.ready));
    for (const c of children) c.proc.stdin.end("go\n");
    const outs = await Promise.all(children.map((c) => c.exit));
    const totals = outs.map((out) => /done (\d+) (\d+)/.exec(out)!.slice(1).map(Number) as [number, number]);
    expect(totals.map(([, busy]) => busy)).toEqual([0, 0, 0]);
    expect(totals.map(([stored]) => stored)).toEqual([rounds * keys, rounds * keys, rounds * keys]);
    const store = await PostgresStore.open({ url });
    try {
      for (let k = 0; k < keys; k++) {
        const session = await store.getSession(`shared:${k}`);
        expect(session?.entryCount).toBe(rounds * 3);
        const seqs = (await store.readEntries(session!.id, { limit: 1000 })).map((e) => e.seq);
        expect(seqs).toEqual(Array.from({ length: rounds * 3 }, (_, i) => i + 1));
      }
    } finally {
      await store.close();
    }
  }, 120_000);
});
