import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { cli } from "../cli/helpers.js";
import { type OpenAiServer, startOpenAiServer } from "../support/openai-server.js";
import { type ServedGateway, servedGateways } from "../support/serve-child.js";
import { useTempDirs } from "../support/temp-dirs.js";

// Needs the build (dist/): the gateway runs as `sessiond serve` in a child process, the CLI from the bundle.
const TOKEN = "ledger-surfaces-token-0123456789";
const auth = { authorization: `Bearer ${TOKEN}` };
const tempDir = useTempDirs();
const { serve } = servedGateways(TOKEN);
let openai: OpenAiServer;

beforeAll(async () => {
  // Turns on the priced model; titles on one with no price (their calls' price is unknown).
  openai = await startOpenAiServer((body) =>
    body.model === "gpt-4o"
      ? { content: "fine", rawUsage: { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 } }
      : { content: "A short title", rawUsage: { prompt_tokens: 50, completion_tokens: 5, total_tokens: 55 } },
  );
});
afterAll(async () => {
  await openai.close();
});

async function getJson(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, { headers: auth });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function stop(gateway: ServedGateway): Promise<void> {
  const exited = new Promise((resolve) => gateway.child.once("exit", resolve));
  gateway.child.kill("SIGTERM");
  await exited;
}

describe("the cost ledger's totals in the API and the CLI", () => {
  it("GET /api/cost and `sessiond cost`: per session, agent and day, unknown prices shown as unknown, totals kept across a restart and a deletion", async () => {
    const dir = tempDir("sessiond-ledger-surfaces-");
    writeFileSync(
      join(dir, "sessiond.yaml"),
      [
        "models:",
        "  gpt:",
        "    provider: openai",
        `    base_url: ${openai.baseUrl}`,
        "    model: gpt-4o",
        "    api_key_env: LEDGER_TEST_KEY",
        "    price: { input: 2, output: 10 }",
        "  mini:",
        "    provider: openai",
        `    base_url: ${openai.baseUrl}`,
        "    model: gpt-mini",
        "    api_key_env: LEDGER_TEST_KEY",
        "agents:",
        "  - { id: main, model: gpt }",
        "titles: { model: mini }",
        "",
      ].join("\n"),
    );
    process.env.LEDGER_TEST_KEY = "sk-ledger-surfaces";
    let gateway = serve(dir);
    const base = await gateway.listening();
    const chat = await fetch(`${base}/api/chat`, {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ message: "hello there", session_id: "admin-ledger" }),
    });
    expect(chat.status).toBe(200);
    // The title is written in the background after the turn.
    await vi.waitFor(
      async () =>
        expect((await getJson(`${base}/api/cost?by=session`)).body.total).toMatchObject({ calls: 2 }),
      {
        timeout: 10_000,
      },
    );

    const byAgent = await getJson(`${base}/api/cost?by=agent`);
    expect(byAgent.status).toBe(200);
    // 1000 × 2 + 100 × 10 per million; the title's price is unknown, so the sum is a lower bound.
    expect(byAgent.body).toMatchObject({
      by: "agent",
      groups: [
        { group: "main", calls: 2, usd: 0.003, unpricedCalls: 1, inputTokens: 1050, outputTokens: 105 },
      ],
      lowerBound: true,
    });
    const later = await getJson(`${base}/api/cost?by=day&since=2999-01-01`);
    expect(later.body).toMatchObject({
      by: "day",
      since: "2999-01-01T00:00:00.000Z",
      groups: [],
      lowerBound: false,
    });
    expect((later.body.total as { usd: unknown }).usd).toBeNull();
    const bad = await getJson(`${base}/api/cost?by=week`);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: { code: "INVALID_ARGUMENT" } });
    const badSince = await getJson(`${base}/api/cost?since=yesterday`);
    expect(badSince.status).toBe(400);

    const deleted = await fetch(`${base}/api/sessions/admin-ledger`, { method: "DELETE", headers: auth });
    expect(deleted.status).toBe(200);
    await stop(gateway);

    const env = { LEDGER_TEST_KEY: "sk-ledger-surfaces" };
    const text = await cli(
      dir,
      ["--config", join(dir, "sessiond.yaml"), "--data-dir", dir, "cost", "--by", "agent"],
      { env },
    );
    expect(text.stderr).toBe("");
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(/^agent\s+calls\s+usd\s+unpriced/m);
    expect(text.stdout).toMatch(/^main\s+2\s+≥ \$0\.003000\s+1\s+1,050\s+105/m);
    expect(text.stdout).toContain("1 of 2 calls have no known price: figures marked ≥ are lower bounds.");
    const json = await cli(
      dir,
      ["--config", join(dir, "sessiond.yaml"), "--data-dir", dir, "cost", "--by", "day", "--json"],
      {
        env,
      },
    );
    const report = JSON.parse(json.stdout) as { groups: Array<{ group: string; calls: number }> };
    expect(report.groups).toEqual([
      expect.objectContaining({ group: new Date().toISOString().slice(0, 10), calls: 2 }),
    ]);
    const wrong = await cli(dir, ["--data-dir", dir, "cost", "--by", "week"], { env });
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toContain("week");

    // After a restart the API reads the same ledger.
    gateway = serve(dir);
    const again = await gateway.listening();
    expect((await getJson(`${again}/api/cost?by=session`)).body.total).toMatchObject({
      calls: 2,
      usd: 0.003,
    });
  });
});
