import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Engine } from "../../src/engine.js";
import {
  type DashboardGateway,
  launchChromium,
  requireBrowserAndBuild,
  screenshotAll,
  signedInPage,
  startDashboardGateway,
} from "./browser.js";

const KEY = "app_api:bob:branching";
const CONTENTS = ["u1", "a1", "u2", "a2"];

/** The messages the transcript shows, top to bottom. */
const shownContents = (page: Page) =>
  page.locator(".transcript:not(.folded) > .entry.message .content").allTextContents();

/** Fork from here, rewind to here (confirmed), the branches panel and a fork's lineage, on a SQLite store. */
describe("the dashboard's fork, rewind and branches, in Chromium", () => {
  let server: DashboardGateway;
  let engine: Engine;
  let browser: Browser;
  let page: Page;
  let parentId = "";

  beforeAll(async () => {
    server = await startDashboardGateway(requireBrowserAndBuild());
    engine = server.gateway.deps.engine;
    await engine.append(
      KEY,
      CONTENTS.map((content, i) => ({
        type: "message" as const,
        role: i % 2 === 0 ? ("user" as const) : ("assistant" as const),
        content,
      })),
    );
    parentId = (await engine.sessions.get(KEY))?.id ?? "";
    browser = await launchChromium();
    page = await signedInPage(browser, server.gateway.url);
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
  });

  const open = async (key: string) => {
    await page.goto(`${server.gateway.url}/sessions/${encodeURIComponent(key)}`);
    await page.locator(".transcript .entry").first().waitFor();
  };
  const entry = (seq: number) => page.locator(`.transcript > .entry[data-entry="${parentId}:${seq}"]`);

  it("forks from an entry onto the fork's page, which says where it came from; the parent is unchanged", async () => {
    await open(KEY);
    expect(await page.getByTestId("lineage").count()).toBe(0);
    await entry(2).getByRole("button", { name: "Fork from here" }).click();
    await page.waitForURL((url) => url.pathname.startsWith("/sessions/admin-fork-"));
    const lineage = page.getByTestId("lineage");
    await lineage.waitFor();
    expect(await lineage.textContent()).toBe(`Forked from ${KEY} at #2`);
    await expect.poll(() => shownContents(page)).toEqual(["u1", "a1"]);
    const forkKey = decodeURIComponent(new URL(page.url()).pathname.slice("/sessions/".length));
    expect((await engine.sessions.get(forkKey))?.forkedFrom).toEqual({
      key: KEY,
      sessionId: parentId,
      seq: 2,
    });
    expect((await engine.history(KEY)).map((e) => (e.type === "message" ? e.content : e.type))).toEqual(
      CONTENTS,
    );

    // The lineage links to the parent, at the entry the fork was taken from.
    await lineage.getByRole("link", { name: KEY }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get("entry")).toBe(`${parentId}:2`);
    await expect.poll(() => entry(2).getAttribute("aria-current")).toBe("true");
  });

  it("rewinds only once confirmed, then lists the rewound session and the fork as branches", async () => {
    await open(KEY);
    await entry(3).getByRole("button", { name: "Rewind to here" }).click();
    const dialog = page.getByRole("dialog", { name: "Rewind to before #3?" });
    await dialog.waitFor();
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await expect.poll(() => dialog.isVisible()).toBe(false);
    expect((await engine.sessions.get(KEY))?.id).toBe(parentId);

    await entry(3).getByRole("button", { name: "Rewind to here" }).click();
    await dialog.getByRole("button", { name: "Rewind" }).click();
    await expect.poll(() => shownContents(page)).toEqual(["u1", "a1"]);
    const current = await engine.sessions.get(KEY);
    expect(current?.id).not.toBe(parentId);
    expect(current?.forkedFrom).toEqual({ key: KEY, sessionId: parentId, seq: 2 });
    await expect
      .poll(() => page.getByTestId("lineage").textContent())
      .toContain("Rewound: continues from #2");

    const panel = page.getByRole("region", { name: "Branches" });
    await panel.waitFor();
    const kinds = await page.evaluate<string[]>(
      `[...document.querySelectorAll(".branch-list li")].map((li) => li.dataset.kind)`,
    );
    expect([...kinds].sort()).toEqual(["current", "fork", "rewound"]);

    // The rewound session opens at its last entry, with the earlier generations shown.
    await panel.locator('li[data-kind="rewound"] a').click();
    await expect.poll(() => new URL(page.url()).searchParams.get("entry")).toBe(`${parentId}:4`);
    await expect.poll(() => entry(4).getAttribute("aria-current")).toBe("true");

    // The fork opens on its own page.
    await open(KEY);
    await panel.locator('li[data-kind="fork"] a').click();
    await page.getByTestId("lineage").waitFor();
    expect(await page.getByTestId("lineage").textContent()).toBe(`Forked from ${KEY} at #2`);
  });

  it("offers fork and rewind only on the conversation as it is, and holds at 375 px", async () => {
    await open(KEY);
    expect(await page.getByRole("button", { name: "Fork from here" }).count()).toBe(2);
    await page.getByLabel("Earlier generations").check();
    await expect.poll(() => page.getByRole("button", { name: "Fork from here" }).count()).toBe(0);
    await page.getByLabel("Earlier generations").uncheck();
    await page.getByRole("region", { name: "Branches" }).waitFor();
    const phoneWidth = await screenshotAll(page, "branches");
    expect(phoneWidth).toBeLessThanOrEqual(375);
  });

  it("shows a rewound generation and the one that inherits its compaction each with only its own entries", async () => {
    const key = "app_api:bob:compacted";
    await engine.append(
      key,
      Array.from({ length: 10 }, (_, i) => ({
        type: "message" as const,
        role: i % 2 === 0 ? ("user" as const) : ("assistant" as const),
        content: `m${i + 1}`,
      })),
    );
    const { entry: compaction } = await engine.compact(key);
    await engine.append(key, [{ type: "message", role: "user", content: "m11" }]);
    // The new generation inherits the compaction and what it keeps; m11 is left to the rewound one.
    await engine.rewind(key, { toSeq: compaction.seq + 1 });
    const replaced = compaction.throughSeq - compaction.fromSeq + 1;

    await open(key);
    await page.getByLabel("Earlier generations").check();
    await page.locator(".transcript .generation").waitFor();
    // Each generation's compaction holds its own generation's entries, never the other's as well (an
    // inherited entry keeps its id, so the transcript names entries by generation and seq).
    expect(await page.locator(".transcript > .compaction summary").allTextContents()).toEqual([
      `Summary and the ${replaced} entries it replaced`,
      `Summary and the ${replaced} entries it replaced`,
    ]);
    const kept = Array.from(
      { length: 10 - compaction.throughSeq },
      (_, i) => `m${compaction.throughSeq + i + 1}`,
    );
    expect(await shownContents(page)).toEqual([...kept, "m11", ...kept]);
  });
});
