import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type DashboardGateway,
  launchChromium,
  requireBrowserAndBuild,
  screenshotAll,
  signedInPage,
} from "./browser.js";

const KEY = "app_api:dora";
const DAY = 24 * 60 * 60_000;
const PHONE = { width: 375, height: 800 };

/** The dashboard items of the first hour: dates, phone layout, the reset's look, charts, cost, work sessions. */
describe("the dashboard's first hour, in Chromium", () => {
  let server: DashboardGateway;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    const webDir = requireBrowserAndBuild();
    const { startDashboardGateway } = await import("./browser.js");
    server = await startDashboardGateway(webDir);
    const engine = server.gateway.deps.engine;
    // An entry from three days ago, then a turn today.
    await engine.append(KEY, [
      { type: "message", role: "user", content: "an old question", ts: Date.now() - 3 * DAY },
    ]);
    const res = await server.api(`/api/app/dora`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message: "a question today" }),
    });
    expect(res.status).toBe(200);
    // The first run seen on a runtime session that already existed (LoCrew): its cost is not measured.
    await engine.agents.store.recordCost({
      agent: "main",
      key: KEY,
      runId: "run-1",
      runtime: "claude-code",
      at: Date.now(),
      status: "not_measured",
    });
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
    await page.locator(".transcript time").first().waitFor();
  };

  it("dates the entries that are not from today, and only those", async () => {
    await openSession();
    const times = await page.locator(".transcript time").allTextContents();
    const year = String(new Date(Date.now() - 3 * DAY).getFullYear());
    expect(times[0]).toContain(year);
    expect(times.at(-1)).not.toContain(year);
    await screenshotAll(page, "first-hour-session");
  });

  it("shows cost not measured in the details", async () => {
    await expect
      .poll(() => page.locator(".details dd").allTextContents())
      .toContainEqual(expect.stringContaining("1 run: cost not measured"));
  });

  it("styles Reset as a caution, unlike Compact", async () => {
    // Read in the page (as strings: the test's own types have no DOM).
    const style = (name: string) =>
      page
        .getByRole("button", { name, exact: true })
        .evaluate(
          new Function(
            "el",
            "const s = getComputedStyle(el); return { background: s.backgroundColor, color: s.color, border: s.borderTopStyle };",
          ) as (el: unknown) => { background: string; color: string; border: string },
        );
    const compact = await style("Compact");
    const reset = await style("Reset");
    const warn = await page.evaluate<string>(`(() => {
      const probe = document.createElement("span");
      probe.style.color = "var(--warn)";
      document.body.append(probe);
      const color = getComputedStyle(probe).color;
      probe.remove();
      return color;
    })()`);
    expect(reset.color).toBe(warn);
    expect(reset.border).toBe("dashed");
    expect(reset).not.toEqual(compact);
  });

  it("starts and ends a work session from the details", async () => {
    await page.getByRole("button", { name: "Start a 30-minute work session" }).click();
    const list = page.getByTestId("work-sessions");
    await list.filter({ hasText: "main: may write without asking until" }).waitFor();
    const detail = (await (await server.api(`/api/sessions/${encodeURIComponent(KEY)}`)).json()) as {
      workSessions: Array<{ agent: string }>;
    };
    expect(detail.workSessions.map((w) => w.agent)).toEqual(["main"]);
    await screenshotAll(page, "first-hour-work-session");
    await page.getByRole("button", { name: "End work session" }).click();
    await page.getByRole("button", { name: "Start a 30-minute work session" }).waitFor();
  });

  it("puts the transcript before the details on a narrow screen", async () => {
    await page.setViewportSize(PHONE);
    await openSession();
    const transcript = await page.locator(".transcript-card").boundingBox();
    const details = await page.locator(".details").boundingBox();
    expect(transcript && details && transcript.y < details.y).toBe(true);
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it("keeps the chat composer on screen at 375×800 without scrolling", async () => {
    await page.setViewportSize(PHONE);
    await page.goto(`${server.gateway.url}/chat`);
    const send = page.getByRole("button", { name: "Send" });
    await send.waitFor();
    const box = await send.boundingBox();
    const text = await page.getByLabel("Message").boundingBox();
    expect(await page.evaluate<number>("window.scrollY")).toBe(0);
    expect(box && box.y + box.height <= PHONE.height).toBe(true);
    expect(text && text.y + text.height <= PHONE.height).toBe(true);
    await page.screenshot({ path: "test-results/screenshots/first-hour-chat-375x800.png" });
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it("draws the overview's charts on an axis with a sensible range when there is little data", async () => {
    await page.goto(`${server.gateway.url}/overview`);
    const axis = page.locator("figure.chart .value-axis").first();
    await axis.waitFor();
    // Two messages in the peak hour: the axis goes to 5, so the bar is short, not the chart's full height.
    expect(await axis.getAttribute("data-max")).toBe("5");
    expect(await axis.locator("text").allTextContents()).toEqual(["5", "0"]);
    await screenshotAll(page, "first-hour-overview");
  });
});
