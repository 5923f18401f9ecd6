import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { EngineConfig } from "../../../src/config/engine-config.js";
import { createEngine, type Engine } from "../../../src/engine.js";
import type { Envelope } from "../../../src/model/envelope.js";
import { runtimeResolver } from "../../../src/runtimes/resolve.js";
import { PgRuntimeSessionStore } from "../../../src/runtimes/sessions/postgres.js";
import { sessionRunner } from "../../../src/runtimes/sessions/runner.js";
import { PostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { rewindTo } from "../../support/engine-branch.js";
import { FAKE_CLAUDE, useFakeCliState } from "../../support/fake-clis.js";
import { type PostgresCluster, startPostgres } from "../../support/postgres.js";
import { runtimeSessionStoreContract } from "./store-contract.js";

let cluster: PostgresCluster;
const stores: PostgresStore[] = [];
const engines: Engine[] = [];
beforeAll(async () => {
  cluster = await startPostgres();
});
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
});
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await cluster?.remove();
});

// Each test's tables in a database of its own, through the store's pool; `reopen` goes through a new store.
let url = "";
const sessionsOn = async (where: string) => {
  const store = await PostgresStore.open({ url: where });
  stores.push(store);
  return new PgRuntimeSessionStore(store.pool);
};

runtimeSessionStoreContract("postgres", {
  open: async () => {
    url = await cluster.createDatabase();
    return sessionsOn(url);
  },
  reopen: () => sessionsOn(url),
});

const claude = useFakeCliState("FAKE_CLAUDE_STATE");
const CHANNEL: Pick<Envelope, "channel" | "chat"> = {
  channel: "slack",
  chat: { type: "group", id: "backend" },
};

function configFor(database: string, cwd: string): EngineConfig {
  return {
    dataDir: mkdtempSync(join(tmpdir(), "sessiond-pgrt-")),
    store: { backend: "postgres", url: database },
    agents: ["dev"],
    defaultAgent: "dev",
    agentOptions: { dev: { runtime: "claude-code", executable: FAKE_CLAUDE, cwd } },
    lifecycle: { sweepIntervalMs: 0 },
    titles: { enabled: false },
  };
}

function say(engine: Engine, config: EngineConfig, text: string) {
  const resolve = runtimeResolver(config, (agent) => engine.agents.settings.get(agent));
  return engine.turnWith({ ...CHANNEL, agent: "dev", sender: { id: "42" }, text }, (context) =>
    sessionRunner(resolve(context.agent), engine.agents.store, { agents: engine.routing.agents })(context),
  );
}

/** Two engines (gateways) on one new database, their Claude Code agent in one working directory. */
async function twoGateways() {
  const database = await cluster.createDatabase();
  const cwd = mkdtempSync(join(tmpdir(), "sessiond-agent-"));
  const configA = configFor(database, cwd);
  const configB = configFor(database, cwd);
  const a = await createEngine(configA);
  engines.push(a);
  const b = await createEngine(configB);
  engines.push(b);
  return { a, b, configA, configB };
}

describe("runtime sessions shared by two gateways on one PostgreSQL database", () => {
  it("resumes through gateway B the Claude Code session recorded through A, and the cost of both adds up", async () => {
    const { a, b, configA, configB } = await twoGateways();

    const first = await say(a, configA, "[total=2] go");
    const recorded = await a.agents.store.get("dev", first.key);
    expect(recorded).toMatchObject({ runtime: "claude-code", id: expect.any(String) });
    expect(await b.agents.store.get("dev", first.key)).toEqual(recorded);

    const second = await say(b, configB, "[total=5] more");
    expect(second.key).toBe(first.key);
    expect(claude.calls<{ resume?: string }>().map((c) => c.resume)).toEqual([undefined, recorded?.id]);
    // B measured its run against the baseline A left: 5 − 2.
    expect(await a.agents.store.costOf("dev", first.key, second.input?.id ?? "")).toEqual({
      status: "priced",
      usd: 3,
    });
    const both = { usd: 5, pricedRuns: 2, unpricedRuns: 0, ambiguousRuns: 0, notMeasuredRuns: 0 };
    expect(await a.agents.store.totals({ key: first.key })).toEqual(both);
    expect(await b.agents.store.totals({ agent: "dev" })).toEqual(both);
  });
});

describe("a rewind followed on PostgreSQL: the turn marks kept by one gateway branch the session through another", () => {
  it("gateway A answers two turns; after a rewind to before the second, B's next run forks A's Claude Code session at the first", async () => {
    const { a, b, configA, configB } = await twoGateways();
    const first = await say(a, configA, "alpha");
    const second = await say(a, configA, "beta");
    const parent = (await a.agents.store.get("dev", first.key))?.id;
    const { outcome } = await rewindTo(a, first.key, second.input?.seq ?? 0);
    expect(outcome).toEqual({ followed: ["dev"], cleared: [] });

    await say(b, configB, "gamma");
    const call = claude
      .calls<{ resume?: string; fork: boolean; remembered: string[]; sessionId: string }>()
      .at(-1);
    expect(call).toMatchObject({
      resume: parent,
      fork: true,
      remembered: [expect.stringContaining("alpha")],
    });
    expect((await a.agents.store.get("dev", first.key))?.id).toBe(call?.sessionId);
  });
});

describe("needs-attention marks with the store's leases (PostgreSQL)", () => {
  /** A store on `where` with its runtime-session tables, counting the statements sent about marks. */
  async function gateway(where: string) {
    const store = await PostgresStore.open({ url: where });
    stores.push(store);
    const sent: string[] = [];
    const query = store.pool.query.bind(store.pool) as (...args: unknown[]) => unknown;
    (store.pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args) => {
      const text = typeof args[0] === "string" ? args[0] : "";
      if (text.includes("runtime_attention") && !text.includes("leases")) sent.push(text.split(" ")[0]!);
      return query(...args);
    };
    return { store, sessions: new PgRuntimeSessionStore(store.pool, store.leases), sent };
  }

  it("clears no mark a turn's lease found absent, and clears one set by another gateway or during the turn", async () => {
    const where = await cluster.createDatabase();
    const a = await gateway(where);
    const b = await gateway(where);

    // No mark when the lease was taken: a successful turn sends nothing to clear.
    let fence = await a.store.leases.acquire("k");
    await a.sessions.setAttention("dev", "k", undefined);
    expect(a.sent).toEqual([]);
    // A failed turn marks it; the next success in that same lease clears it.
    await a.sessions.setAttention("dev", "k", "boom", 1);
    await a.sessions.setAttention("dev", "k", undefined);
    expect(await a.sessions.attention("k")).toEqual([]);
    await a.sessions.setAttention("dev", "k", "boom again", 2);
    await a.store.leases.release(fence);

    // Gateway b takes the key next: its lease sees a's mark, and b's success clears it.
    fence = await b.store.leases.acquire("k");
    await b.sessions.setAttention("dev", "k", undefined);
    expect(b.sent).toEqual(["DELETE"]);
    expect(await b.sessions.attention("k")).toEqual([]);
    await b.store.leases.release(fence);

    // Without the key's lease nothing is assumed: the clear is sent.
    await a.sessions.setAttention("dev", "other", undefined);
    expect(a.sent.at(-1)).toBe("DELETE");
  });
});
