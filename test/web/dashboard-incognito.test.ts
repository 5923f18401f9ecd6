import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type DashboardGateway,
  launchChromium,
  requireBrowserAndBuild,
  signedInPage,
  startDashboardGateway,
} from "./browser.js";

const SECRET = "telegram:8";
const KEPT = "telegram:9";

function dm(peer: string, text: string) {
  return { channel: "telegram", chat: { type: "direct" as const, id: peer }, sender: { id: peer }, text };
}

describe("an incognito session on the dashboard, in Chromium", () => {
  let server: DashboardGateway;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    server = await startDashboardGateway(requireBrowserAndBuild());
    const engine = server.gateway.deps.engine;
    await engine.turn(dm("9", "kept on disk"));
    await engine.turn(dm("8", "whispered"), { incognito: true });
    browser = await launchChromium();
    page = await signedInPage(browser, server.gateway.url);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("is listed with an Incognito badge, which a stored session has not, and keeps it as it changes live", async () => {
    const row = page.locator(`tr[data-key="${SECRET}"]`);
    await row.waitFor();
    await expect.poll(() => row.locator(".badge-incognito").count()).toBe(1);
    expect(await page.locator(`tr[data-key="${KEPT}"]`).locator(".badge-incognito").count()).toBe(0);
    // A turn while the list is open: the row comes back through sessions.watch, still marked.
    await server.gateway.deps.engine.turn(dm("8", "again"));
    await expect.poll(() => row.locator(".c-messages").textContent()).toBe("4");
    expect(await row.locator(".badge-incognito").count()).toBe(1);
  });

  it("offers no export on its page", async () => {
    await page.goto(`${server.gateway.url}/sessions/${encodeURIComponent(SECRET)}`);
    await page.getByText("whispered").first().waitFor();
    expect(await page.locator(".session-head .badge-incognito").count()).toBe(1);
    expect(await page.getByRole("button", { name: "Export" }).isDisabled()).toBe(true);
    // A turn while the page is open: the session comes back live, still marked; no share button either.
    await server.gateway.deps.engine.turn(dm("8", "while the page is open"));
    await page.getByText("while the page is open").first().waitFor();
    expect(await page.locator(".session-head .badge-incognito").count()).toBe(1);
    expect(await page.getByRole("button", { name: /^Share/ }).count()).toBe(0);
    await page.goto(`${server.gateway.url}/sessions/${encodeURIComponent(KEPT)}`);
    await page.getByText("kept on disk").first().waitFor();
    expect(await page.getByRole("button", { name: "Export" }).isDisabled()).toBe(false);
    expect(await page.getByRole("button", { name: /^Share/ }).count()).toBeGreaterThan(0);
  });
});
