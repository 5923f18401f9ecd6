import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TrialStore } from "../../../bench/kill-trials/gateway.js";
import { runTrials, type TrialReport } from "../../../bench/kill-trials/trials.js";
import { type PostgresCluster, startPostgres } from "../../support/postgres.js";

const CLI = resolve("dist/bundle/main.js");

/**
 * A short run of bench/kill-trials: 3 SIGKILLs, 3 clients on /api/chat, 2 on /api/chat?async=1 (acknowledged
 * when admitted), 4 on /v1/chat/completions.
 */
function shortTrials(store: TrialStore, databaseUrl?: string): Promise<TrialReport> {
  return runTrials({
    store,
    cli: CLI,
    ...(databaseUrl ? { databaseUrl, leaseTtlMs: 1000 } : {}),
    kills: 3,
    chatClients: 3,
    asyncClients: 2,
    openAiClients: 4,
    upMs: [400, 1200],
    lastUpMs: 500,
    modelDelayMs: 20,
  });
}

function expectEachInputOnce(report: TrialReport): void {
  expect(report.doubles).toEqual([]);
  expect(report.repeatedKeys).toEqual([]);
  for (const count of Object.values(report.drivers)) {
    // The gateways answered inputs of both drivers between the kills, and the store holds each of them.
    expect(count.acked).toBeGreaterThan(0);
    expect(count.lost).toBe(0);
    expect(count.ackedOnce).toBe(count.acked);
  }
}

describe("SIGKILL trials under load: no input stored twice, none acknowledged lost", () => {
  it("on SQLite", { timeout: 120_000 }, async () => {
    expectEachInputOnce(await shortTrials("sqlite"));
  });

  it("on JSONL", { timeout: 120_000 }, async () => {
    expectEachInputOnce(await shortTrials("jsonl"));
  });

  describe("on PostgreSQL", () => {
    let cluster: PostgresCluster | undefined;
    beforeAll(async () => {
      cluster = await startPostgres();
    });
    afterAll(async () => {
      await cluster?.remove();
    });

    it("one gateway at a time, each taking over the inputs of the one killed", {
      timeout: 120_000,
    }, async () => {
      expectEachInputOnce(await shortTrials("postgres", await cluster!.createDatabase()));
    });
  });
});
