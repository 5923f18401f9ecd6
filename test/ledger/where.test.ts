import { existsSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../src/engine.js";
import { PgCostLedger } from "../../src/ledger/postgres.js";
import { telegramDm } from "../support/envelopes.js";
import { type OpenAiServer, startOpenAiServer } from "../support/openai-server.js";
import { type PostgresCluster, startPostgres } from "../support/postgres.js";
import { useTempDirs } from "../support/temp-dirs.js";

const tempDir = useTempDirs();
let engine: Engine | undefined;
let openai: OpenAiServer;
let cluster: PostgresCluster;

beforeAll(async () => {
  process.env.SESSIOND_LEDGER_TEST_KEY = "sk-ledger-test";
  openai = await startOpenAiServer(() => ({
    content: "fine",
    rawUsage: { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 },
  }));
  cluster = await startPostgres();
}, 60_000);
afterAll(async () => {
  await openai.close();
  await cluster?.remove();
});
afterEach(async () => {
  await engine?.close();
  engine = undefined;
});

const models = () => ({
  gpt: {
    provider: "openai" as const,
    model: "gpt-4o",
    baseUrl: openai.baseUrl,
    apiKeyEnv: "SESSIOND_LEDGER_TEST_KEY",
    price: { input: 2, output: 10 },
  },
});

describe("where the engine keeps the ledger", () => {
  it("PostgreSQL: the cost_ledger table of the store's database, read by a second engine on it", async () => {
    const url = await cluster.createDatabase();
    const config = {
      dataDir: tempDir("sessiond-ledger-pg-"),
      store: { backend: "postgres" as const, url },
      models: models(),
      agentOptions: { main: { model: "gpt" } },
      titles: { enabled: false },
      lifecycle: { sweepIntervalMs: 0 },
    };
    engine = await createEngine(config);
    const result = await engine.turn(telegramDm("hello"));
    await engine.close();
    engine = undefined;
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const rows = await client.query(
        "SELECT kind, key, session_id, input_tokens, usd, source FROM cost_ledger",
      );
      expect(rows.rows).toEqual([
        {
          kind: "turn",
          key: result.key,
          session_id: result.sessionId,
          input_tokens: "1000",
          usd: 0.003,
          source: "config",
        },
      ]);
    } finally {
      await client.end();
    }
    engine = await createEngine(config);
    expect(await engine.agents.ledger.totals("agent")).toEqual([
      expect.objectContaining({ group: "main", calls: 1, usd: 0.003, inputTokens: 1000 }),
    ]);
  });

  it("JSONL: cost-ledger.db in the directory's .sessiond folder, beside the runtime sessions", async () => {
    const dir = tempDir("sessiond-ledger-jsonl-");
    engine = await createEngine({
      dataDir: dir,
      store: { backend: "jsonl", path: join(dir, "sessions") },
      models: models(),
      agentOptions: { main: { model: "gpt" } },
      titles: { enabled: false },
      lifecycle: { sweepIntervalMs: 0 },
    });
    await engine.turn(telegramDm("hello"));
    expect(existsSync(join(dir, "sessions", ".sessiond", "cost-ledger.db"))).toBe(true);
    expect(await engine.agents.ledger.totals("day")).toEqual([
      expect.objectContaining({ calls: 1, usd: 0.003 }),
    ]);
  });
});

describe("the PostgreSQL ledger's table", () => {
  it("is made once when gateways open the ledger at the same moment (CREATE IF NOT EXISTS races otherwise)", async () => {
    const url = await cluster.createDatabase();
    const pools = Array.from({ length: 6 }, () => new pg.Pool({ connectionString: url, max: 1 }));
    try {
      const ledgers = await Promise.all(pools.map((pool) => PgCostLedger.open(pool)));
      expect(ledgers).toHaveLength(6);
      const { rows } = await pools[0]!.query(
        "SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'cost_ledger'",
      );
      expect(rows[0]).toEqual({ n: 1 });
    } finally {
      await Promise.all(pools.map((pool) => pool.end()));
    }
  });
});
