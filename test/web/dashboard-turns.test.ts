import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOKEN } from "../gateway/http/helpers.js";
import { HeldRuntime } from "../support/held-runtime.js";
import { type DashboardGateway, launchChromium, requireBrowserAndBuild, VIEWPORTS } from "./browser.js";

describe("the dashboard's running turns", () => {
  let server: DashboardGateway;
  let browser: Browser;
  let page: Page;
  const held = new HeldRuntime();

  beforeAll(async () => {
    const webDir = requireBrowserAndBuild();
    const { startDashboardGateway } = await import("./browser.js");
    // Stuck at once: any quiet time is past a threshold of 0.
    server = await startDashboardGateway(webDir, {
      config: { turns: { stuckAfterMs: 0 } },
      runtimes: new Map([["main", held.runtime]]),
    });
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: VIEWPORTS.desktop })).newPage();
  });

  afterAll(async () => {
    for (const run of held.runs) run.release();
    await browser?.close();
    await server?.stop();
  });

  it("shows a stuck turn on the overview and aborts it", async () => {
    const res = await server.api("/api/app/dave?async=1", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: "never answers" }),
    });
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    await held.started(1);
    await page.goto(server.gateway.url);
    await page.getByLabel("Access token").fill(TOKEN);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL("**/sessions");
    await page.getByRole("link", { name: "Overview" }).click();
    const row = page.locator(`li[data-turn="${id}"]`);
    await row.filter({ hasText: "app_api:dave" }).filter({ hasText: "Stuck" }).waitFor();
    await row.getByRole("button", { name: "Abort" }).click();
    await page.getByText("No turn is running.").waitFor();
    expect(held.runs[0]?.aborted).toBe(true);
    const status = (await (await server.api(`/api/turns/${id}`)).json()) as { state: string };
    expect(status.state).toBe("interrupted");
  });
});
