import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OpenAiServer, startOpenAiServer } from "../support/openai-server.js";
import {
  type DashboardGateway,
  launchChromium,
  requireBrowserAndBuild,
  screenshotAll,
  signedInPage,
  startDashboardGateway,
} from "./browser.js";

const DM = { channel: "telegram", chat: { type: "direct" as const, id: "42" }, sender: { id: "42" } };

/** The cost ledger's table on the overview page, from real turns on the local OpenAI server. */
describe("the dashboard's cost table, in Chromium", () => {
  let openai: OpenAiServer;
  let server: DashboardGateway;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    process.env.SESSIOND_WEB_COST_KEY = "sk-web-cost";
    openai = await startOpenAiServer(() => ({
      content: "fine",
      rawUsage: { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 },
    }));
    const model = (name: string) => ({
      provider: "openai" as const,
      model: name,
      baseUrl: openai.baseUrl,
      apiKeyEnv: "SESSIOND_WEB_COST_KEY",
    });
    server = await startDashboardGateway(requireBrowserAndBuild(), {
      config: {
        // main's model has a price; helper's has none, so its cost is unknown and the total a lower bound.
        models: { gpt: { ...model("gpt-4o"), price: { input: 2, output: 10 } }, mini: model("gpt-mini") },
        agents: ["main", "helper"],
        agentOptions: { main: { model: "gpt" }, helper: { model: "mini" } },
      },
    });
    const engine = server.gateway.deps.engine;
    await engine.turn({ ...DM, text: "hello", agent: "main" });
    await engine.turn({ ...DM, text: "hello again", agent: "main" });
    await engine.turn({ ...DM, text: "and you", agent: "helper" });
    browser = await launchChromium();
    page = await signedInPage(browser, server.gateway.url);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await openai?.close();
  });

  it("per agent: a priced agent's cost, an unpriced one's as unknown, the total marked as a lower bound", async () => {
    await page.goto(`${server.gateway.url}/overview`);
    const table = page.locator("section.cost");
    await table.getByRole("heading", { name: "Cost of model calls" }).waitFor();
    await table.getByLabel("Per").selectOption("agent");
    const main = table.locator('tr[data-group="main"]');
    await main.waitFor();
    // 2 × (1000 × 2 + 100 × 10) per million.
    expect(await main.locator(".c-usd").textContent()).toBe("$0.0060");
    expect(await table.locator('tr[data-group="helper"] .c-usd').textContent()).toBe("unknown");
    expect(await table.locator('tr[data-group="Total"] .c-usd').textContent()).toBe("≥ $0.0060");
    expect(await table.getByTestId("cost-note").textContent()).toBe(
      "1 of 3 calls have no known price: figures marked ≥ are lower bounds.",
    );
    const phoneWidth = await screenshotAll(page, "overview-cost");
    expect(phoneWidth).toBeLessThanOrEqual(375);
  });

  it("per session and per day: the same calls, grouped again", async () => {
    const table = page.locator("section.cost");
    await table.getByLabel("Per").selectOption("session");
    await expect.poll(() => table.locator("tbody tr").count()).toBe(3);
    await table.getByLabel("Per").selectOption("day");
    const today = new Date().toISOString().slice(0, 10);
    await table.locator(`tr[data-group="${today}"]`).waitFor();
    expect(await table.locator(`tr[data-group="${today}"] td`).first().textContent()).toBe("3");
  });
});
