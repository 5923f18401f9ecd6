import type { Browser, Page, Route } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TOKEN } from "../gateway/http/helpers.js";
import { type DashboardGateway, launchChromium, requireBrowserAndBuild, VIEWPORTS } from "./browser.js";

const SECRET = "sk-proj9Qw3Er5Ty7Ui9Op1As3Df5Gh7";
/** Messages that try to become markup or leak a secret through a snippet. */
const HOSTILE = [
  `grebe <img src=x onerror="window.pwned='img'"> here`,
  `grebe <script>window.pwned='script'</script> there`,
  `grebe &lt;b&gt;not bold&lt;/b&gt; and <mark>fake mark</mark>`,
  `grebe with a key ${SECRET} inside`,
];

describe("the dashboard search page in Chromium", () => {
  let server: DashboardGateway;
  let browser: Browser;
  let page: Page;

  const say = async (user: string, message: string) => {
    const res = await server.api(`/api/app/${user}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ message }),
    });
    expect(res.status).toBe(200);
  };
  const hits = () => page.locator("li.search-hit");

  beforeAll(async () => {
    const webDir = requireBrowserAndBuild();
    const { startDashboardGateway } = await import("./browser.js");
    server = await startDashboardGateway(webDir);
    for (const message of HOSTILE) await say("hostile", message);
    await say("long", "the kingfisher dived once");
    for (let i = 0; i < 30; i++) await say("long", `filler message number ${i} with nothing to find`);
    await say("alpha", "alpha only");
    await say("beta", "beta only");
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: VIEWPORTS.desktop })).newPage();
    await page.goto(server.gateway.url);
    await page.evaluate(`sessionStorage.setItem("sessiond.token", ${JSON.stringify(TOKEN)})`);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("shows results as you type, with the matches marked and nothing else drawn as markup", async () => {
    await page.goto(`${server.gateway.url}/search`);
    await page.getByLabel("Words to find").pressSequentially("greb");
    await hits().first().waitFor();
    // Each hostile message as a user message and as its echo.
    expect(await hits().count()).toBe(HOSTILE.length * 2);
    const snippets = page.locator(".search-hit .snippet");
    // The last word typed is a prefix: what was typed is marked.
    expect(await snippets.locator("mark").allTextContents()).toContain("greb");
    // Only <mark> elements inside snippets, and none of them from the stored text.
    expect(await snippets.locator(":not(mark)").count()).toBe(0);
    expect(await snippets.locator("mark", { hasText: "fake mark" }).count()).toBe(0);
    const text = (await snippets.allTextContents()).join("\n");
    expect(text).toContain("<img src=x");
    expect(text).toContain("<script>");
    expect(text).toContain("<mark>fake mark</mark>");
    expect(text).not.toContain(SECRET);
    expect(await page.content()).not.toContain(SECRET);
    expect(await page.evaluate("window.pwned")).toBeUndefined();
  });

  it("filters by role", async () => {
    await page.getByLabel("Said by").selectOption("user");
    await expect.poll(() => hits().count()).toBe(HOSTILE.length);
    await page.getByLabel("Said by").selectOption("");
    await expect.poll(() => hits().count()).toBe(HOSTILE.length * 2);
  });

  it("ignores an answer that comes back after a newer one", async () => {
    // The answer for "alpha" is held until the one for "beta" has been drawn.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const alpha = /\/api\/search\?q=alpha&/;
    await page.route(alpha, async (route: Route) => {
      await held;
      await route.continue();
    });
    await page.goto(`${server.gateway.url}/search`);
    const input = page.getByLabel("Words to find");
    await input.fill("alpha");
    await page.waitForRequest(alpha);
    await input.fill("beta");
    await hits().filter({ hasText: "beta only" }).first().waitFor();
    const alphaAnswered = page.waitForResponse(alpha);
    release();
    await alphaAnswered;
    // A render after the stale answer would show it: wait for a frame, then read.
    await page.evaluate(
      "new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))",
    );
    expect(await hits().filter({ hasText: "alpha" }).count()).toBe(0);
    expect(await hits().filter({ hasText: "beta only" }).count()).toBeGreaterThan(0);
    await page.unroute(alpha);
  });

  it("opens a hit's session at that entry, highlighted and scrolled into view, out of a compaction", async () => {
    await page.goto(`${server.gateway.url}/search`);
    await page.getByLabel("Words to find").fill("kingfisher");
    await page.getByLabel("Said by").selectOption("user");
    const hit = hits().filter({ hasText: "kingfisher" });
    await hit.waitFor();
    await hit.getByRole("link").click();
    await page.waitForURL(
      (url) => url.pathname === "/sessions/app_api%3Along" && url.searchParams.has("entry"),
    );
    const entry = page.locator('li.entry[aria-current="true"]');
    await entry.waitFor();
    expect(await entry.textContent()).toContain("the kingfisher dived once");
    expect(await page.locator("li.entry.highlighted").count()).toBe(1);
    // The session was compacted: the entry is one the summary replaced, shown opened.
    expect(await page.locator("li.compaction details[open] li.entry.highlighted").count()).toBe(1);
    // Within the viewport (boundingBox is relative to it), where the top of the page is not.
    const box = await entry.boundingBox();
    expect(box?.y).toBeGreaterThanOrEqual(0);
    expect((box?.y ?? 0) + (box?.height ?? 0)).toBeLessThanOrEqual(VIEWPORTS.desktop.height);
    expect(await page.evaluate<number>("window.scrollY")).toBeGreaterThan(0);
  });
});
