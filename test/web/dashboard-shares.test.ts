import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type DashboardGateway,
  launchChromium,
  requireBrowserAndBuild,
  screenshotAll,
  signedInPage,
  startDashboardGateway,
} from "./browser.js";

const KEY = "app_api:shared";

describe("share links on the dashboard's session page, in Chromium", () => {
  let server: DashboardGateway;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    const webDir = requireBrowserAndBuild();
    server = await startDashboardGateway(webDir);
    await server.gateway.deps.engine.append(KEY, [
      { type: "message", role: "user", content: "Which train goes to Porto?" },
      {
        type: "message",
        role: "assistant",
        content: "",
        toolCalls: [{ id: "c1", name: "trains", arguments: {} }],
      },
      { type: "message", role: "tool", content: "TOOL-RESULT-TEXT", toolCallId: "c1" },
      { type: "message", role: "assistant", content: "The 9:39 Alfa Pendular." },
    ]);
    browser = await launchChromium();
    page = await signedInPage(browser, server.gateway.url);
    await page
      .context()
      .grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.gateway.url });
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  /** A page of a browser context that never signed in: what someone given the link sees. */
  async function stranger(url: string): Promise<{ status: number; text: string }> {
    const context = await browser.newContext();
    try {
      const other = await context.newPage();
      const response = await other.goto(url);
      return { status: response?.status() ?? 0, text: (await other.locator("body").textContent()) ?? "" };
    } finally {
      await context.close();
    }
  }

  it("shares, copies the link, which opens without signing in, and revokes it", async () => {
    await page.goto(`${server.gateway.url}/sessions/${encodeURIComponent(KEY)}`);
    const panel = page.getByRole("region", { name: "Share links" });
    await panel.getByRole("button", { name: "Share" }).click();
    const item = panel.locator("li[data-share]");
    await item.waitFor();
    await page.getByRole("status", { name: "Share status" }).filter({ hasText: "Link made" }).waitFor();
    const href = (await item.locator("a").getAttribute("href")) ?? "";
    expect(href).toMatch(new RegExp(`^${server.gateway.url}/share/[A-Za-z0-9_-]{24}$`));

    await item.getByRole("button", { name: "Copy link" }).click();
    await page.getByRole("status", { name: "Share status" }).filter({ hasText: "Link copied" }).waitFor();
    expect(await page.evaluate<string>("navigator.clipboard.readText()")).toBe(href);

    const opened = await stranger(href);
    expect(opened.status).toBe(200);
    expect(opened.text).toContain("Which train goes to Porto?");
    expect(opened.text).toContain("The 9:39 Alfa Pendular.");
    expect(opened.text).not.toContain("TOOL-RESULT-TEXT");
    expect(opened.text).not.toContain("Access token");

    expect(await screenshotAll(page, "session-share-links")).toBeLessThanOrEqual(375);

    await item.getByRole("button", { name: "Revoke" }).click();
    await page.getByRole("status", { name: "Share status" }).filter({ hasText: "Link revoked" }).waitFor();
    expect(await panel.locator("li[data-share]").count()).toBe(0);
    const gone = await stranger(href);
    expect(gone.status).toBe(404);
    expect(gone.text).toContain("does not exist or was revoked");
    expect(gone.text).not.toContain("Porto");
  });
});
