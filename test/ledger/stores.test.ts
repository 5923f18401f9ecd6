import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Pool } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type CostLedger,
  forgottenKey,
  type LedgerEntry,
  MemoryCostLedger,
  PgCostLedger,
  SqliteCostLedger,
} from "../../src/ledger/index.js";
import { openPool } from "../../src/store/postgres/pool.js";
import { type PostgresCluster, startPostgres } from "../support/postgres.js";
import { useTempDirs } from "../support/temp-dirs.js";

const base = { model: "gpt-4o", kind: "turn" as const, inputTokens: 100, outputTokens: 10 };
const ENTRIES: LedgerEntry[] = [
  {
    ...base,
    at: "2026-12-05T23:59:00.000Z",
    agent: "main",
    sessionId: "s1",
    key: "tg:dm:alice",
    usd: 0.5,
    source: "config",
  },
  {
    ...base,
    at: "2026-12-06T00:01:00.000Z",
    agent: "main",
    sessionId: "s1",
    key: "tg:dm:alice",
    usd: null,
    source: null,
    cacheReadTokens: 40,
  },
  {
    ...base,
    at: "2026-12-06T08:00:00.000Z",
    agent: "coder",
    sessionId: "s2",
    key: "tg:dm:bob",
    usd: 0.25,
    source: "provider",
    reportedUsd: 0.25,
  },
  {
    ...base,
    at: "2026-12-06T09:00:00.000Z",
    agent: "coder",
    sessionId: "s3",
    key: "tg:dm:bob",
    usd: null,
    source: null,
    kind: "title",
  },
];

function storeCases(name: string, open: () => Promise<CostLedger>) {
  describe(`cost ledger on ${name}`, () => {
    it("totals per session, agent and day; an unknown price stays unknown, never 0", async () => {
      const ledger = await open();
      for (const e of ENTRIES) await ledger.record(e);
      expect(await ledger.totals("session")).toEqual([
        {
          group: "s1",
          calls: 2,
          usd: 0.5,
          unpricedCalls: 1,
          inputTokens: 200,
          outputTokens: 20,
          cacheReadTokens: 40,
          cacheWriteTokens: 0,
        },
        {
          group: "s2",
          calls: 1,
          usd: 0.25,
          unpricedCalls: 0,
          inputTokens: 100,
          outputTokens: 10,
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
        },
        {
          group: "s3",
          calls: 1,
          usd: null,
          unpricedCalls: 1,
          inputTokens: 100,
          outputTokens: 10,
          cacheReadTokens: 0,
          cacheWriteTokens: 0,
        },
      ]);
      const agents = await ledger.totals("agent");
      expect(agents.map((t) => [t.group, t.calls, t.usd, t.unpricedCalls])).toEqual([
        ["coder", 2, 0.25, 1],
        ["main", 2, 0.5, 1],
      ]);
      const days = await ledger.totals("day");
      expect(days.map((t) => [t.group, t.calls, t.usd])).toEqual([
        ["2026-12-05", 1, 0.5],
        ["2026-12-06", 3, 0.25],
      ]);
      expect((await ledger.totals("day", { since: "2026-12-06" })).map((t) => t.group)).toEqual([
        "2026-12-06",
      ]);
      await ledger.close();
    });

    it("forgetting a key keeps the totals and replaces the key by a keyed hash", async () => {
      const ledger = await open();
      for (const e of ENTRIES) await ledger.record(e);
      const before = await ledger.totals("session");
      expect(await ledger.forgetKey("tg:dm:bob", "secret-1")).toBe(2);
      expect(await ledger.totals("session")).toEqual(before);
      expect(forgottenKey("secret-1", "tg:dm:bob")).not.toContain("bob");
      expect(forgottenKey("secret-1", "tg:dm:bob")).not.toBe(forgottenKey("secret-2", "tg:dm:bob"));
      await ledger.close();
    });
  });
}

storeCases("memory", async () => new MemoryCostLedger());

const tempDir = useTempDirs();
storeCases("SQLite", async () => new SqliteCostLedger(join(tempDir("ledger-"), "ledger.db")));

describe("SQLite ledger file", () => {
  it("keeps the totals across a reopen, and a forgotten key's bytes leave the file", async () => {
    const path = join(tempDir("ledger-"), "ledger.db");
    const first = new SqliteCostLedger(path);
    for (const e of ENTRIES) await first.record(e);
    await first.forgetKey("tg:dm:bob", "s");
    await first.close();
    const second = new SqliteCostLedger(path);
    expect((await second.totals("agent")).map((t) => t.calls)).toEqual([2, 2]);
    await second.close();
    expect(readFileSync(path).includes("tg:dm:bob")).toBe(false);
    expect(readFileSync(path).includes("tg:dm:alice")).toBe(true);
  });
});

describe("PostgreSQL", () => {
  let cluster: PostgresCluster;
  const pools: Pool[] = [];
  beforeAll(async () => {
    cluster = await startPostgres();
  }, 120_000);
  afterAll(async () => {
    for (const pool of pools) await pool.end();
    await cluster?.remove();
  });
  storeCases("PostgreSQL", async () => {
    const pool = await openPool(await cluster.createDatabase(), 2);
    pools.push(pool);
    return PgCostLedger.open(pool);
  });
});
