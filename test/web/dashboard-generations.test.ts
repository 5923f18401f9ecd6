import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type DashboardGateway,
  launchChromium,
  requireBrowserAndBuild,
  screenshotAll,
  signedInPage,
} from "./browser.js";

const KEY = "app_api:generations";
/** The archived generation: more entries than the old view's 2,000 at once. */
const ARCHIVED = 3_000;
const CURRENT = 50;
const PAGE = 200;

/** The entries the transcript holds in the DOM (messages and the archived generation's reset line). */
const inDom = (page: Page) => page.locator(".transcript > .entry").count();

/** The messages the transcript shows, top to bottom: their generation's id and seq. */
async function shown(page: Page): Promise<Array<{ session: string; seq: number }>> {
  const names = await page.evaluate<string[]>(
    `[...document.querySelectorAll(".transcript > .entry[data-entry]")].map((el) => el.dataset.entry)`,
  );
  return names.map((name) => {
    const [session = "", seq = "0"] = name.split(":");
    return { session, seq: Number(seq) };
  });
}

/** A key with a big archived generation (3,000 entries) and a short current one (50). */
describe("the dashboard's earlier generations, in Chromium", () => {
  let server: DashboardGateway;
  let browser: Browser;
  let page: Page;
  let archivedId = "";
  let currentId = "";

  beforeAll(async () => {
    const webDir = requireBrowserAndBuild();
    const { startDashboardGateway } = await import("./browser.js");
    server = await startDashboardGateway(webDir);
    const engine = server.gateway.deps.engine;
    for (let i = 0; i < ARCHIVED; i += 500) {
      await engine.append(
        KEY,
        Array.from({ length: 500 }, (_, j) => ({
          type: "message" as const,
          role: j % 2 === 0 ? ("user" as const) : ("assistant" as const),
          content: `archived ${i + j}`,
        })),
      );
    }
    archivedId = (await engine.sessions.get(KEY))?.id ?? "";
    await engine.reset(KEY);
    await engine.append(
      KEY,
      Array.from({ length: CURRENT }, (_, j) => ({
        type: "message" as const,
        role: "user" as const,
        content: `current ${j}`,
      })),
    );
    currentId = (await engine.sessions.get(KEY))?.id ?? "";
    expect(archivedId).not.toBe(currentId);
    browser = await launchChromium();
    page = await signedInPage(browser, server.gateway.url);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const openWithEarlierGenerations = async () => {
    await page.goto(`${server.gateway.url}/sessions/${encodeURIComponent(KEY)}`);
    await page.locator(".transcript .entry").first().waitFor();
    await page.getByLabel("Earlier generations").check();
    await page.locator(`.transcript > .entry[data-entry^="${archivedId}:"]`).first().waitFor();
  };

  it("shows one page, the newest entries of both generations, with a button for earlier ones", async () => {
    await openWithEarlierGenerations();
    expect(await inDom(page)).toBe(PAGE);
    const first = await shown(page);
    // The whole current generation, and before it the newest messages of the archived one (whose last
    // entry is its reset), gap-free up to its last.
    const archived = first.filter((e) => e.session === archivedId).map((e) => e.seq);
    const current = first.filter((e) => e.session === currentId).map((e) => e.seq);
    expect(current).toEqual(Array.from({ length: CURRENT }, (_, i) => i + 1));
    expect(archived).toEqual(Array.from({ length: PAGE - CURRENT - 1 }, (_, i) => ARCHIVED - 148 + i));
    await expect(page.locator(".transcript .generation").count()).resolves.toBe(1);
    await expect(page.getByRole("button", { name: "Load earlier entries" }).count()).resolves.toBe(1);
  });

  it("loads the page before on each click, continuing in the archived generation with no gap", async () => {
    await openWithEarlierGenerations();
    const button = page.getByRole("button", { name: "Load earlier entries" });
    for (let clicks = 1; clicks <= 2; clicks++) {
      await button.click();
      await page
        .locator(".transcript > .entry")
        .nth(PAGE * (clicks + 1) - 1)
        .waitFor();
      // Never the whole 3,051: the pages asked for, and nothing else.
      expect(await inDom(page)).toBe(PAGE * (clicks + 1));
      const entries = await shown(page);
      const archived = entries.filter((e) => e.session === archivedId).map((e) => e.seq);
      const from = ARCHIVED - archived.length + 1;
      expect(archived).toEqual(Array.from({ length: archived.length }, (_, i) => from + i));
    }
    expect(await inDom(page)).toBeLessThan(ARCHIVED);
  });

  it("walks back to the archived generation's first entry, then offers no more", async () => {
    await openWithEarlierGenerations();
    const button = page.getByRole("button", { name: "Load earlier entries" });
    // 3,051 entries in pages of 200: 15 more pages after the first, and a last click that finds none.
    for (let i = 0; i < 16 && (await button.count()) > 0; i++) {
      const before = (await shown(page))[0];
      await button.click();
      await expect.poll(async () => (await shown(page))[0]).not.toEqual(before);
    }
    const entries = await shown(page);
    expect(entries[0]).toEqual({ session: archivedId, seq: 1 });
    expect(entries).toHaveLength(ARCHIVED + CURRENT);
    await expect(button.count()).resolves.toBe(0);
  });

  it("opens a search hit far back in the archived generation, with only the pages up to it", async () => {
    const hit = `${archivedId}:700`;
    await page.goto(
      `${server.gateway.url}/sessions/${encodeURIComponent(KEY)}?${new URLSearchParams({ entry: hit })}`,
    );
    const target = page.locator(`.transcript .entry[data-entry="${hit}"]`);
    await target.waitFor();
    await expect(target.getAttribute("aria-current")).resolves.toBe("true");
    // Entries 700–3,001 of the archived generation and the 50 current ones: 2,352, in whole pages of 200.
    expect(await inDom(page)).toBe(2_400);
    await expect(page.getByRole("button", { name: "Load earlier entries" }).count()).resolves.toBe(1);
  });

  it("holds at 375 px: nothing overflows sideways", async () => {
    await openWithEarlierGenerations();
    const phoneWidth = await screenshotAll(page, "earlier-generations");
    expect(phoneWidth).toBeLessThanOrEqual(375);
  });
});
