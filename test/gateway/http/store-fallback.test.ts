import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "../../support/child-output.js";
import { launchChromium, requireBrowserAndBuild, screenshotAll } from "../../web/browser.js";

const CLI = resolve("dist/src/cli/main.js");
const TOKEN = "fallback-test-token";
const dirs: string[] = [];
const children: ChildProcess[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once("exit", r));
      child.kill("SIGTERM");
      await exited;
    }
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "sessiond-fallback-"));
  dirs.push(dir);
  return dir;
}

interface Run {
  child: ChildProcess;
  output: { text: string; stderr: string };
  exit: Promise<number | null>;
}

/** `sessiond <args>` in `dir` with `sessiond.yaml` as given (and the token from the environment). */
function run(dir: string, args: string[], options: { uid?: number } = {}): Run {
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: dir,
    env: { ...process.env, SESSIOND_TOKEN: TOKEN, SESSIOND_CONFIG: "", SESSIOND_DATA_DIR: "" },
    stdio: ["ignore", "pipe", "pipe"],
    ...(options.uid !== undefined ? { uid: options.uid, gid: options.uid } : {}),
  });
  children.push(child);
  const output = { text: "", stderr: "" };
  child.stdout?.on("data", (chunk: Buffer) => {
    output.text += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output.text += chunk.toString();
    output.stderr += chunk.toString();
  });
  const exit = new Promise<number | null>((r) => {
    child.once("exit", (code) => r(code));
    // A Node binary the other user may not execute (under a 0700 directory) fails the spawn: said, not thrown.
    child.once("error", (error) => {
      output.text += `spawn failed: ${error.message}\n`;
      r(null);
    });
  });
  return { child, output, exit };
}

const api = (url: string, path: string, init: RequestInit = {}) =>
  fetch(`${url}${path}`, { ...init, headers: { authorization: `Bearer ${TOKEN}`, ...init.headers } });

/** Starts `serve`, which must fall back, and checks every loud signal and that turns still work. */
async function expectFallback(dir: string, code: string, uid?: number): Promise<string> {
  const serve = run(dir, ["serve", "--port", "0"], uid === undefined ? {} : { uid });
  const [, url] = await waitFor(serve.child, /listening on (http:\/\/127\.0\.0\.1:\d+)/, serve.output);
  if (!url) throw new Error("no url");
  await waitFor(serve.child, /agent main: /, serve.output);
  expect(serve.output.stderr).toMatch(
    new RegExp(
      `warning: the sqlite store could not be opened \\(${code}: .+\\); running on the in-memory store`,
    ),
  );
  expect(serve.output.text).toContain("store: memory");
  // The log (pino JSON on stdout, written in batches) says it too, as a warning.
  const [line] = await waitFor(serve.child, new RegExp(`^\\{.*"code":"${code}".*$`, "m"), serve.output);
  expect(JSON.parse(line)).toMatchObject({ level: 40, configured: "sqlite", code });

  // Degraded is not ready: /health answers 503 (a load balancer routes around it), /health/live 200.
  const healthRes = await fetch(`${url}/health`);
  expect(healthRes.status).toBe(503);
  expect((await fetch(`${url}/health/live`)).status).toBe(200);
  const health = await healthRes.json();
  expect(health).toMatchObject({
    status: "degraded",
    store: "memory",
    fallback: { configured: "sqlite", code, reason: expect.any(String) },
  });
  const metrics = await (await api(url, "/metrics")).text();
  expect(metrics).toMatch(/^sessiond_store_fallback\{configured="sqlite"\} 1$/m);
  const turn = await api(url, "/api/app/alice", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ message: "still answered" }),
  });
  expect(turn.status).toBe(200);
  return url;
}

describe("the in-memory fallback of sessiond serve (GoClaw)", () => {
  it("starts on the memory store, loudly, when the store's directory is a file", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "occupied"), "a file where the store's directory should be");
    writeFileSync(join(dir, "sessiond.yaml"), "data_dir: .\nstore: { path: occupied/sessiond.db }\n");
    await expectFallback(dir, "STORE_UNAVAILABLE");
  });

  it("starts on the memory store when the SQLite file is corrupt, and the dashboard shows a banner", async () => {
    const webDir = requireBrowserAndBuild();
    expect(webDir).toBeTruthy();
    const dir = tempDir();
    writeFileSync(join(dir, "sessiond.db"), "this is not a database\n".repeat(400));
    writeFileSync(join(dir, "sessiond.yaml"), "data_dir: .\n");
    const url = await expectFallback(dir, "STORE_CORRUPT");
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.goto(url);
      await page.getByLabel("Access token").fill(TOKEN);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.waitForURL("**/sessions");
      const banner = page.getByRole("alert").filter({ hasText: "Running on the in-memory store." });
      await banner.waitFor();
      expect(await banner.textContent()).toContain("The sqlite store could not be opened (STORE_CORRUPT");
      await screenshotAll(page, "store-fallback-banner");
    } finally {
      await browser.close();
    }
  });

  it("starts on the memory store when the data directory cannot be written (run as nobody)", async () => {
    const dir = tempDir();
    const data = join(dir, "data");
    mkdirSync(data);
    writeFileSync(join(dir, "sessiond.yaml"), "data_dir: data\n");
    // Owned by root, 0755: nobody may read and enter it, not create the database there.
    chmodSync(dir, 0o755);
    chmodSync(data, 0o755);
    await expectFallback(dir, "STORE_UNAVAILABLE", 65534);
  });

  it("exits with the store's error as before with store.fallback: false", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "occupied"), "x");
    writeFileSync(
      join(dir, "sessiond.yaml"),
      "data_dir: .\nstore: { path: occupied/sessiond.db, fallback: false }\n",
    );
    const serve = run(dir, ["serve", "--port", "0"]);
    expect(await serve.exit).toBe(1);
    expect(serve.output.stderr).toMatch(/^error \[STORE_UNAVAILABLE\]: /m);
    expect(serve.output.text).not.toContain("listening on");
  });

  it("never falls back in the CLI", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "occupied"), "x");
    writeFileSync(join(dir, "sessiond.yaml"), "data_dir: .\nstore: { path: occupied/sessiond.db }\n");
    const append = run(dir, ["sessions", "append", "app_api:alice", "kept?"]);
    expect(await append.exit).toBe(1);
    expect(append.output.stderr).toMatch(/^error \[STORE_UNAVAILABLE\]: /m);
    expect(append.output.text).not.toContain("in-memory");
  });
});
