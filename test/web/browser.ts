import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import type { EngineConfig } from "../../src/config/engine-config.js";
import { createEngine } from "../../src/engine.js";
import { type RunningGateway, startGateway } from "../../src/gateway/server.js";
import { defaultWebDir } from "../../src/gateway/web/dir.js";
import type { Runtime } from "../../src/model/runtime.js";
import { memoryLogger, TOKEN } from "../gateway/http/helpers.js";

export const CHROMIUM = "/usr/bin/chromium";
export const SCREENSHOTS = resolve("test-results/screenshots");

/** The flags the dashboard tests run Chromium with: no sandbox (root in CI), no network chatter. */
const FLAGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Fails (never skips) with what to do: CI installs Chromium and builds the dashboard before testing. */
export function requireBrowserAndBuild(): string {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `Chromium is missing at ${CHROMIUM}: install it with \`apt-get install -y chromium\` (.ci/run does)`,
    );
  }
  const webDir = defaultWebDir();
  if (!webDir || !existsSync(join(webDir, "index.html"))) {
    throw new Error(
      "the dashboard is not built (dist/web/index.html): run `npm run build` first (`npm test` does)",
    );
  }
  return webDir;
}

/** Headless Chromium from Debian, driven by playwright-core; Playwright gives it a fresh profile dir. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS });
}

export interface DashboardGateway {
  gateway: RunningGateway;
  dataDir: string;
  /** fetch against the gateway with the token. */
  api(path: string, init?: RequestInit): Promise<Response>;
  stop(): Promise<void>;
}

/** A real gateway on an ephemeral port over a temp SQLite store; agents without a model answer with echo. */
export async function startDashboardGateway(
  webDir: string,
  options: { config?: EngineConfig; runtimes?: Map<string, Runtime> } = {},
): Promise<DashboardGateway> {
  const dataDir = mkdtempSync(join(tmpdir(), "sessiond-web-"));
  const config = {
    dataDir,
    titles: { enabled: false },
    lifecycle: { sweepIntervalMs: 0 },
    ...options.config,
  };
  const engine = await createEngine(config, options.runtimes ? { runtimes: options.runtimes } : {});
  const gateway = await startGateway({
    engine,
    token: TOKEN,
    port: 0,
    logger: memoryLogger([]),
    graceMs: 2000,
    webDir,
  });
  return {
    gateway,
    dataDir,
    api: (path, init = {}) => {
      const headers = new Headers(init.headers);
      headers.set("authorization", `Bearer ${TOKEN}`);
      return fetch(`${gateway.url}${path}`, { ...init, headers });
    },
    stop: async () => {
      await gateway.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A desktop-sized page signed in to the dashboard at `url` with the test token, on its sessions list. */
export async function signedInPage(browser: Browser, url: string): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  await page.goto(url);
  await page.getByLabel("Access token").fill(TOKEN);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL("**/sessions");
  return page;
}

export const VIEWPORTS = {
  desktop: { width: 1280, height: 800 },
  phone: { width: 375, height: 740 },
} as const;

/**
 * Screenshots of the page as it is, at desktop and 375 px, light and dark, into test-results/screenshots.
 * Returns the widest the document got at 375 px, so the caller can check nothing overflows sideways.
 */
export async function screenshotAll(page: Page, name: string): Promise<number> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  let phoneWidth = 0;
  for (const [viewport, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size);
    for (const colorScheme of ["light", "dark"] as const) {
      await page.emulateMedia({ colorScheme });
      await page.screenshot({
        path: join(SCREENSHOTS, `${name}-${viewport}-${colorScheme}.png`),
        fullPage: true,
      });
      if (viewport === "phone") {
        phoneWidth = Math.max(
          phoneWidth,
          await page.evaluate<number>("document.documentElement.scrollWidth"),
        );
      }
    }
  }
  await page.setViewportSize(VIEWPORTS.desktop);
  await page.emulateMedia({ colorScheme: "light" });
  return phoneWidth;
}
