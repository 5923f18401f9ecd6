import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type DashboardGateway,
  launchChromium,
  requireBrowserAndBuild,
  screenshotAll,
  signedInPage,
} from "./browser.js";

const KEY = "app_api:big";
const MB = 1024 * 1024;
// 1 MB of text in lines, as a pasted log would be.
const BIG = Array.from(
  { length: 16_385 },
  (_, i) => `line ${String(i).padStart(5, "0")} ${"x".repeat(52)}`,
).join("\n");

/** A session with a 1 MB message among 400 short ones: what the issue measured at 454,000 px. */
describe("the dashboard with big data, in Chromium", () => {
  let server: DashboardGateway;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    const webDir = requireBrowserAndBuild();
    const { startDashboardGateway } = await import("./browser.js");
    server = await startDashboardGateway(webDir);
    const engine = server.gateway.deps.engine;
    for (let i = 0; i < 400; i += 100) {
      await engine.append(
        KEY,
        Array.from({ length: 100 }, (_, j) => ({
          type: "message" as const,
          role: j % 2 === 0 ? ("user" as const) : ("assistant" as const),
          content: `short message ${i + j}`,
        })),
      );
    }
    await engine.append(KEY, [{ type: "message", role: "user", content: BIG }]);
    expect(BIG.length).toBeGreaterThanOrEqual(MB);
    browser = await launchChromium();
    page = await signedInPage(browser, server.gateway.url);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const openSession = async () => {
    await page.goto(`${server.gateway.url}/sessions/${encodeURIComponent(KEY)}`);
    await page.getByRole("heading", { name: "Transcript" }).waitFor();
    await page.locator(".transcript .entry").first().waitFor();
  };
  const height = () => page.evaluate<number>("document.documentElement.scrollHeight");

  it("shows the first few KB of a 1 MB message, with a button for the rest", async () => {
    await openSession();
    const big = page.locator(".entry.message").filter({ hasText: "line 00000" });
    const shown = (await big.locator(".content").textContent()) ?? "";
    expect(shown.length).toBeLessThan(8 * 1024);
    expect(shown).toContain("line 00000");
    expect(shown).not.toContain("line 16384");
    const button = big.getByRole("button", { name: /^Show all \(1\.\d M characters\)$/ });
    await expect(button.count()).resolves.toBe(1);
  });

  it("pages a long transcript: the newest entries first, earlier ones on request", async () => {
    await openSession();
    const entries = await page.locator(".transcript > .entry").count();
    expect(entries).toBeLessThanOrEqual(200);
    expect(entries).toBeGreaterThan(100);
    await expect(page.getByRole("button", { name: "Load earlier entries" }).count()).resolves.toBe(1);
  });

  it("keeps the page a bounded height at 1280 px and at 375 px, where nothing overflows sideways", async () => {
    await openSession();
    // 200 short entries and 4 KB of the big one: tens of thousands of px, not the 454,000 of the whole MB.
    expect(await height()).toBeLessThan(60_000);
    const phoneWidth = await screenshotAll(page, "big-data");
    expect(phoneWidth).toBeLessThanOrEqual(375);
    await page.setViewportSize({ width: 375, height: 740 });
    expect(await height()).toBeLessThan(120_000);
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it("shows the whole message when asked", async () => {
    await openSession();
    const big = page.locator(".entry.message").filter({ hasText: "line 00000" });
    await big.getByRole("button", { name: /^Show all/ }).click();
    await big.locator(".content").filter({ hasText: "line 16384" }).waitFor();
    const whole = (await big.locator(".content").textContent()) ?? "";
    expect(whole.length).toBe(BIG.length);
  });
});
