import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../src/engine.js";
import { forgetLedgerKeys, forgottenKey, type LedgerTotal } from "../../src/ledger/index.js";
import { telegramDm } from "../support/envelopes.js";
import { type OpenAiServer, startOpenAiServer } from "../support/openai-server.js";
import { useTempDirs } from "../support/temp-dirs.js";

const tempDir = useTempDirs();
let engine: Engine | undefined;
let openai: OpenAiServer;

beforeAll(async () => {
  process.env.SESSIOND_LEDGER_TEST_KEY = "sk-ledger-test";
  openai = await startOpenAiServer(() => ({
    content: "fine",
    rawUsage: { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 },
  }));
});
afterAll(async () => {
  await openai.close();
});
afterEach(async () => {
  await engine?.close();
  engine = undefined;
});

const dm = (from: string, text: string) => ({
  ...telegramDm(text),
  chat: { type: "direct" as const, id: from },
  sender: { id: from },
});

/** The sum over every group: what must not move when a session goes. */
function sum(totals: LedgerTotal[]) {
  return {
    calls: totals.reduce((n, t) => n + t.calls, 0),
    usd: Math.round(totals.reduce((n, t) => n + (t.usd ?? 0), 0) * 1e9) / 1e9,
    inputTokens: totals.reduce((n, t) => n + t.inputTokens, 0),
  };
}

/** The ledger's files (the database, its WAL) that hold `text`. */
function ledgerFilesHolding(dir: string, text: string): string[] {
  return readdirSync(dir)
    .filter((name) => name.startsWith("cost-ledger.db"))
    .filter((name) => readFileSync(join(dir, name)).includes(Buffer.from(text)));
}

describe("ledger totals survive what happens to sessions", () => {
  it("a reset, a deletion and erasure by subject leave every total; forgetLedgerKeys leaves no byte of the key", async () => {
    const dir = tempDir("sessiond-ledger-survival-");
    engine = await createEngine({
      dataDir: dir,
      models: {
        gpt: {
          provider: "openai",
          model: "gpt-4o",
          baseUrl: openai.baseUrl,
          apiKeyEnv: "SESSIOND_LEDGER_TEST_KEY",
          price: { input: 2, output: 10 },
        },
      },
      agentOptions: { main: { model: "gpt" } },
      routing: { identityLinks: { alice: ["telegram:42"] } },
      titles: { enabled: false },
      lifecycle: { sweepIntervalMs: 0 },
    });
    const ledger = engine.agents.ledger;
    const first = await engine.turn(dm("42", "hello"));
    await engine.turn(dm("99", "hi there"));
    // 1000 × 2 + 100 × 10 per million = 0.003 $ a call.
    const before = sum(await ledger.totals("agent"));
    expect(before).toEqual({ calls: 2, usd: 0.006, inputTokens: 2000 });

    await engine.reset(first.key);
    const afterReset = await engine.turn(dm("42", "again"));
    expect(afterReset.sessionId).not.toBe(first.sessionId);
    const bySession = await ledger.totals("session");
    expect(bySession.map((t) => t.group).sort()).toContain(first.sessionId);
    expect(bySession.find((t) => t.group === first.sessionId)).toMatchObject({ calls: 1, usd: 0.003 });
    const three = { calls: 3, usd: 0.009, inputTokens: 3000 };
    expect(sum(await ledger.totals("agent"))).toEqual(three);

    await engine.delete("telegram:99");
    expect(await engine.sessions.get("telegram:99")).toBeUndefined();
    expect(sum(await ledger.totals("agent"))).toEqual(three);
    expect(sum(await ledger.totals("day"))).toEqual(three);

    const perSession = await ledger.totals("session");
    const receipt = await engine.forget({ subject: "alice" });
    expect(receipt.keys.map((k) => k.key)).toContain(first.key);
    expect(await engine.sessions.get(first.key)).toBeUndefined();
    expect(await ledger.totals("session")).toEqual(perSession);
    // The ledger never held text: the key is what names the person. Erasure replaces it by its keyed hash
    // (under the tombstone's secret), in both of their calls, and no byte of the key stays in the files.
    expect(receipt.ledgerEntries).toBe(2);
    expect(ledgerFilesHolding(dir, first.key)).toEqual([]);
    expect(await forgetLedgerKeys(ledger, [first.key], "another-secret")).toBe(0);
    expect(await ledger.totals("session")).toEqual(perSession);
    // Another key, by hand: the same rewrite.
    await engine.turn(dm("77", "hello"));
    expect(ledgerFilesHolding(dir, "telegram:77").length).toBeGreaterThan(0);
    expect(await forgetLedgerKeys(ledger, ["telegram:77", "telegram:77"], "secret-of-the-tombstone")).toBe(1);
    expect(ledgerFilesHolding(dir, "telegram:77")).toEqual([]);
    expect(
      ledgerFilesHolding(dir, forgottenKey("secret-of-the-tombstone", "telegram:77")).length,
    ).toBeGreaterThan(0);
  });
});
