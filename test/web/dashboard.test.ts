import { readFileSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ECHO_LABEL } from "../../src/runtimes/echo.js";
import { TOKEN } from "../gateway/http/helpers.js";
import {
  type DashboardGateway,
  launchChromium,
  requireBrowserAndBuild,
  screenshotAll,
  VIEWPORTS,
} from "./browser.js";

const ALICE = "app_api:alice";
/** The focused element's text or label and its outline, read in the page. */
const FOCUSED = `(() => {
  const el = document.activeElement;
  return {
    text: el?.textContent?.trim() ?? "",
    name: el?.id || el?.getAttribute("aria-label") || "",
    outline: el ? getComputedStyle(el).outlineStyle : "none",
  };
})()`;
const BOB = "app_api:bob";
const CAROL = "app_api:carol";

describe("the dashboard in Chromium", () => {
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
  const row = (key: string) => page.locator(`tr[data-key="${key}"]`);
  const expectFitsPhone = async (name: string) => {
    expect(await screenshotAll(page, name), `${name} overflows 375 px`).toBeLessThanOrEqual(
      VIEWPORTS.phone.width,
    );
  };

  beforeAll(async () => {
    const webDir = requireBrowserAndBuild();
    const { startDashboardGateway } = await import("./browser.js");
    server = await startDashboardGateway(webDir);
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: VIEWPORTS.desktop })).newPage();
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  it("refuses a wrong token and keeps nothing", async () => {
    await page.goto(server.gateway.url);
    await page.getByLabel("Access token").fill("not-the-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").filter({ hasText: "That token was refused." }).waitFor();
    expect(await page.evaluate<number>("sessionStorage.length")).toBe(0);
    await expectFitsPhone("signin");
  });

  it("signs in with the token, kept in this tab's sessionStorage", async () => {
    await page.getByLabel("Access token").fill(TOKEN);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL("**/sessions");
    await page.getByRole("heading", { name: "Sessions" }).waitFor();
    await page.locator(".live-open").waitFor();
    expect(await page.evaluate<string | null>('sessionStorage.getItem("sessiond.token")')).toBe(TOKEN);
    expect(await page.evaluate<string | null>('localStorage.getItem("sessiond.token")')).toBeNull();
  });

  it("shows sessions posted through the API as they arrive, without a reload or a jump", async () => {
    await page.evaluate("window.marker = 1");
    const pagerBefore = await page.locator(".pager").boundingBox();
    await say("alice", "hello from alice");
    await row(ALICE).waitFor();
    await say("bob", "bob checking in about the invoice");
    await row(BOB).waitFor();
    await say("carol", "carol here");
    await row(CAROL).waitFor();
    // A second exchange on alice updates her row in place: 2 messages → 4.
    await say("alice", "one more thing");
    await row(ALICE).locator(".c-messages", { hasText: /^4$/ }).waitFor();
    expect(await page.evaluate<number | undefined>("window.marker")).toBe(1);
    expect(await row(ALICE).locator(".c-agent").textContent()).toBe("main");
    expect(await row(ALICE).locator(".c-channel").textContent()).toBe("app_api");
    // The page's space is reserved: the pager stays put while rows arrive.
    expect((await page.locator(".pager").boundingBox())?.y).toBe(pagerBefore?.y);

    await page.getByLabel("Search key or title").fill("bob");
    await row(ALICE).waitFor({ state: "detached" });
    expect(await page.locator("tbody tr").getAttribute("data-key")).toBe(BOB);
    await page.getByLabel("Search key or title").fill("");
    await row(ALICE).waitFor();
    expect(await page.locator("tbody tr").count()).toBe(3);
    await expectFitsPhone("sessions");
  });

  it("opens a session: transcript with roles and senders, details, live entries", async () => {
    // Enough history for a compaction to have something to summarise.
    const engine = server.gateway.deps.engine;
    for (let i = 0; i < 15; i++) {
      await engine.append(ALICE, [
        {
          type: "message",
          role: "user",
          content: `question ${i} about order ORD-${1000 + i}`,
          sender: { id: "alice" },
        },
        { type: "message", role: "assistant", content: `answer ${i}` },
      ]);
    }
    await page.getByRole("link", { name: ALICE }).click();
    await page.waitForURL(`**/sessions/${encodeURIComponent(ALICE)}`);
    await page.locator('li[data-role="user"]', { hasText: "hello from alice" }).waitFor();
    const reply = page.locator('li[data-role="assistant"]', { hasText: ECHO_LABEL }).first();
    await reply.waitFor();
    expect(await page.locator('li[data-role="user"] .sender').first().textContent()).toBe("alice");
    expect(await page.getByTestId("messages").textContent()).toBe("34");
    await page.getByText("No session here yet").waitFor();

    await page.getByLabel("Export format").selectOption("md");
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Export" }).click(),
    ]);
    expect(download.suggestedFilename()).toBe("app_api_alice.md");
    const saved = await download.path();
    expect(readFileSync(saved, "utf8")).toContain("question 14 about order ORD-1014");

    await say("alice", "a live message");
    await page.locator('li[data-role="user"]', { hasText: "a live message" }).waitFor();
    await page.getByTestId("messages").filter({ hasText: /^36$/ }).waitFor();
    await expectFitsPhone("session");
  });

  it("compacts it and shows the compaction entry, its summarised part expandable", async () => {
    await page.getByRole("button", { name: "Compact" }).click();
    const compaction = page.locator('li[data-type="compaction"]');
    await compaction.waitFor();
    await page.getByRole("status").filter({ hasText: "Compacted" }).waitFor();
    // The summarised messages fold into the compaction: hidden until it is expanded.
    expect(await page.locator('li[data-role="user"]', { hasText: "hello from alice" }).isVisible()).toBe(
      false,
    );
    await compaction.locator("summary").click();
    await compaction.locator(".summary", { hasText: "[Offline extractive summary]" }).waitFor();
    await compaction.locator('li[data-role="user"]', { hasText: "hello from alice" }).waitFor();

    const res = await server.api(`/api/sessions/${encodeURIComponent(ALICE)}/history`);
    const { entries } = (await res.json()) as { entries: Array<{ type: string }> };
    expect(entries.filter((e) => e.type === "compaction")).toHaveLength(1);
    await expectFitsPhone("session-compacted");
  });

  it("resets it: a new generation, the old one readable with its reset entry", async () => {
    await page.getByRole("button", { name: "Reset" }).click();
    await page.getByTestId("generation").filter({ hasText: /^2$/ }).waitFor();
    await page.getByText("No entries yet.").waitFor();
    await page.getByLabel("Earlier generations").check();
    await page.locator('li[data-type="reset"]', { hasText: "api" }).waitFor();

    const res = await server.api(`/api/sessions/${encodeURIComponent(ALICE)}`);
    expect(((await res.json()) as { session: { generation: number } }).session.generation).toBe(2);
  });

  it("deletes a session only once the deletion is confirmed", async () => {
    await page.goto(`${server.gateway.url}/sessions/${encodeURIComponent(CAROL)}`);
    await page.locator('li[data-role="user"]', { hasText: "carol here" }).waitFor();
    await page.getByRole("button", { name: "Delete…" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete this session?" });
    await dialog.waitFor();
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await dialog.waitFor({ state: "hidden" });
    expect((await server.api(`/api/sessions/${encodeURIComponent(CAROL)}`)).status).toBe(200);

    await page.getByRole("button", { name: "Delete…" }).click();
    await dialog.getByRole("button", { name: "Delete" }).click();
    await page.waitForURL("**/sessions");
    expect((await server.api(`/api/sessions/${encodeURIComponent(CAROL)}`)).status).toBe(404);
  });

  it("chats with an agent in an admin- web session, the reply streaming in", async () => {
    await page.getByRole("link", { name: "Chat", exact: true }).click();
    await page.waitForURL("**/chat?session=admin-*");
    await page.locator(".live-open").waitFor();
    const key = new URL(page.url()).searchParams.get("session")!;
    expect(key).toMatch(/^admin-[0-9a-f]{8}$/);
    await page.getByLabel("Message").fill("hi there");
    await page.getByRole("button", { name: "Send" }).click();
    const reply = page.locator('.bubble-assistant[data-streaming="false"]');
    await reply.waitFor();
    expect(await reply.textContent()).toContain('You said: "hi there"');
    // The echo runtime streams its reply in three pieces; each reached the page as a chat.delta event.
    expect(Number(await reply.getAttribute("data-deltas"))).toBeGreaterThanOrEqual(2);

    const res = await server.api(`/api/sessions/${encodeURIComponent(key)}`);
    const { session } = (await res.json()) as { session: { channel: string; messageCount: number } };
    expect(session).toMatchObject({ channel: "web", messageCount: 2 });
    await expectFitsPhone("chat");
  });

  it("shows the overview: activity per hour from the store", async () => {
    await page.getByRole("link", { name: "Overview" }).click();
    const messages = page.getByTestId("tile-Messages");
    await messages.filter({ hasText: /^\d+$/ }).waitFor();
    // alice's 36 messages (her first generation is archived, so not counted), bob's 2 and the chat's 2.
    expect(Number(await messages.textContent())).toBe(4);
    expect(Number(await page.getByTestId("tile-Compactions").textContent())).toBe(0);
    expect(Number(await page.getByTestId("tile-Sessions active").textContent())).toBe(2);
    expect(await page.locator("figure.chart svg rect.bar").count()).toBeGreaterThan(0);
    await expectFitsPhone("overview");
  });

  it("is reachable by keyboard, with a visible focus ring", async () => {
    await page.goto(`${server.gateway.url}/sessions`);
    await page.locator(".live-open").waitFor();
    const reached: string[] = [];
    for (let i = 0; i < 14; i++) {
      await page.keyboard.press("Tab");
      const focused = await page.evaluate<{ text: string; name: string; outline: string }>(FOCUSED);
      reached.push(focused.name || focused.text);
      expect(focused.outline, `focus on ${JSON.stringify(focused)}`).not.toBe("none");
    }
    for (const name of ["Skip to content", "Sessions", "Chat", "Overview", "Sign out", "f-q", "f-agent"]) {
      expect(reached).toContain(name);
    }
  });

  it("switches between light and dark with the toggle, over the system's preference", async () => {
    const background = () => page.evaluate<string>("getComputedStyle(document.body).backgroundColor");
    await page.emulateMedia({ colorScheme: "light" });
    const light = await background();
    await page.getByRole("button", { name: /^Theme: system/ }).click();
    expect(await page.evaluate<string | undefined>("document.documentElement.dataset.theme")).toBe("light");
    await page.getByRole("button", { name: /^Theme: light/ }).click();
    expect(await background()).not.toBe(light);
    await page.reload();
    await page.getByRole("button", { name: /^Theme: dark/ }).waitFor();
    expect(await background()).not.toBe(light);
    await page.getByRole("button", { name: /^Theme: dark/ }).click();
    expect(await background()).toBe(light);
  });

  it("signs out: the token is gone and the API is not called with it again", async () => {
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("Access token").waitFor();
    expect(await page.evaluate<string | null>('sessionStorage.getItem("sessiond.token")')).toBeNull();
  });
});
