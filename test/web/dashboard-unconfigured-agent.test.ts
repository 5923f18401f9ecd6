import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type DashboardGateway,
  launchChromium,
  requireBrowserAndBuild,
  signedInPage,
  startDashboardGateway,
} from "./browser.js";

const IMPORTED = "work:discord:c42";
const OWN = "telegram:7";

/** An imported session of an agent sessiond does not have, beside one of its own (issue: "no agent named work"). */
describe("the dashboard with a session of an unconfigured agent, in Chromium", () => {
  let server: DashboardGateway;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    server = await startDashboardGateway(requireBrowserAndBuild());
    const engine = server.gateway.deps.engine;
    const message = { type: "message" as const, role: "user" as const, content: "from before the move" };
    await engine.append(IMPORTED, [message], {
      init: { agent: "work", channel: "discord", chatType: "channel", createdBy: "import:openclaw" },
    });
    await engine.append(OWN, [{ ...message, content: "hello" }]);
    browser = await launchChromium();
    page = await signedInPage(browser, server.gateway.url);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("marks the agent as unconfigured in the list, and only there", async () => {
    const imported = page.locator(`tr[data-key="${IMPORTED}"]`);
    await imported.waitFor();
    await expect.poll(() => imported.getByTestId("agent-unconfigured").count()).toBe(1);
    expect(await page.locator(`tr[data-key="${OWN}"]`).getByTestId("agent-unconfigured").count()).toBe(0);
  });

  it("says on the session page what such a session can do, and offers no action that needs the agent", async () => {
    await page.goto(`${server.gateway.url}/sessions/${encodeURIComponent(IMPORTED)}`);
    await page.getByTestId("agent-unconfigured-hint").waitFor();
    expect(await page.getByTestId("agent-unconfigured-hint").textContent()).toContain("run no turn");
    expect(await page.getByTestId("work-sessions").getByRole("button").count()).toBe(0);
    await page.getByText("from before the move").waitFor();
  });
});
