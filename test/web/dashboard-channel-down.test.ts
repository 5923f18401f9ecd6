import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { TOKEN } from "../gateway/http/helpers.js";
import { startLocalServer } from "../support/http-server.js";
import { type ServedGateway, serveGateway } from "../support/serve-child.js";
import { launchChromium, requireBrowserAndBuild, signedInPage } from "./browser.js";

/** A real `serve` whose Telegram Bot API refuses connections: the dashboard says so on every page. */
describe("the dashboard with a chat channel that cannot be reached, in Chromium", () => {
  let dir: string;
  let served: ServedGateway;
  let browser: Browser;
  let url: string;

  beforeAll(async () => {
    requireBrowserAndBuild();
    dir = mkdtempSync(join(tmpdir(), "sessiond-web-channel-"));
    const probe = await startLocalServer(() => {});
    const closedOrigin = probe.origin;
    await probe.close();
    writeFileSync(join(dir, "tg-token"), "123456:telegram-test-token-for-the-banner");
    writeFileSync(
      join(dir, "sessiond.yaml"),
      stringify({
        titles: { enabled: false },
        channels: { telegram: { token_file: "tg-token", mode: "polling", api_base_url: closedOrigin } },
      }),
    );
    served = serveGateway(dir, TOKEN);
    url = await served.listening();
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    served?.kill();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("shows the channel's state and its last error, and the rest of the dashboard works", async () => {
    const page = await signedInPage(browser, url);
    const banner = page.getByTestId("channel-down");
    await banner.waitFor();
    const text = (await banner.textContent()) ?? "";
    expect(text).toContain("Channel telegram: retrying.");
    expect(text).toContain("could not connect");
    expect(text).not.toContain("telegram-test-token-for-the-banner");
    // The sessions list is there under the banner.
    await page.getByRole("heading", { name: "Sessions" }).waitFor();
  });
});
