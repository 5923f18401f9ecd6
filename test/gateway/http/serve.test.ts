import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { resolveToken, TOKEN_FILE } from "../../../src/gateway/token.js";
import type { Runtime, RuntimeEvent, RuntimeRun } from "../../../src/runtimes/index.js";
import { waitFor } from "../../support/child-output.js";
import { postJson, startTestGateway } from "./helpers.js";

const CLI = resolve("dist/bundle/main.js");
const dirs: string[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "sessiond-serve-"));
  dirs.push(dir);
  return dir;
}

afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("the access token", () => {
  it("is generated once with mode 0600, and SESSIOND_TOKEN wins", () => {
    const dir = tempDir();
    const first = resolveToken(dir, {});
    expect(first).toMatchObject({ source: "file", generated: true, path: join(dir, TOKEN_FILE) });
    expect(statSync(join(dir, TOKEN_FILE)).mode & 0o777).toBe(0o600);
    expect(resolveToken(dir, {})).toMatchObject({ token: first.token, generated: false });
    expect(resolveToken(dir, { SESSIOND_TOKEN: "from-env" })).toMatchObject({
      token: "from-env",
      source: "env",
    });
  });
});

describe("sessiond serve", () => {
  it("starts on SQLite, prints where things are, and stops cleanly on SIGTERM", async () => {
    const dir = tempDir();
    const child = spawn(process.execPath, [CLI, "serve", "--port", "0"], {
      cwd: dir,
      env: { ...process.env, SESSIOND_DATA_DIR: dir, SESSIOND_TOKEN: "", SESSIOND_CONFIG: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const output = { text: "" };
    child.stdout?.on("data", (chunk: Buffer) => {
      output.text += chunk.toString();
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      output.text += chunk.toString();
    });
    try {
      const [, url] = await waitFor(child, /listening on (http:\/\/127\.0\.0\.1:\d+)/, output);
      await waitFor(child, /agent main: echo/, output);
      expect(output.text).toContain(`stored in ${join(dir, TOKEN_FILE)} (mode 0600)`);
      expect(output.text).toContain("store: sqlite");
      const token = resolveToken(dir, {}).token;
      expect(output.text).not.toContain(token);
      expect((await fetch(`${url}/health`)).status).toBe(200);
      // The dashboard built by `npm run build`, at / and at its client routes, without the token.
      expect(output.text).toContain(`dashboard: ${url}/`);
      for (const path of ["/", "/sessions"]) {
        const page = await fetch(`${url}${path}`);
        expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
        expect(await page.text()).toContain('<div id="app">');
      }
      const chat = await fetch(`${url}/api/chat`, {
        ...postJson({ message: "persist me" }, { authorization: `Bearer ${token}` }),
      });
      expect(chat.status).toBe(200);
      const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      // Log lines are written in batches; the last ones are flushed on the way out.
      expect(output.text).toContain('"method":"POST","path":"/api/chat","status":200');
      expect(output.text).not.toContain(token);
      expect(statSync(join(dir, "sessiond.db")).size).toBeGreaterThan(0);
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });
});

/** A runtime whose run never ends until it is cancelled; `running` resolves once one has started. */
function stuckRuntime(): { stuck: Runtime; running: Promise<void> } {
  let started!: () => void;
  const running = new Promise<void>((resolve) => {
    started = resolve;
  });
  const stuck: Runtime = {
    kind: "test",
    async *run(run: RuntimeRun): AsyncGenerator<RuntimeEvent> {
      started();
      await new Promise<void>((r) => run.signal.addEventListener("abort", () => r(), { once: true }));
      yield { type: "text", delta: "too late" };
    },
  };
  return { stuck, running };
}

describe("graceful shutdown", () => {
  it("says in one line that the port is busy, with a --port hint, instead of a stack trace", async () => {
    const dir = tempDir();
    const busy = createServer();
    await new Promise<void>((done) => busy.listen(0, "127.0.0.1", done));
    try {
      const { port } = busy.address() as AddressInfo;
      const child = spawn(process.execPath, [CLI, "serve", "--port", String(port)], {
        cwd: dir,
        env: { ...process.env, SESSIOND_DATA_DIR: dir, SESSIOND_TOKEN: "t", SESSIOND_CONFIG: "" },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      child.stderr?.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const code = await new Promise<number | null>((done) => child.on("exit", done));
      expect(code).toBe(1);
      expect(stderr).toBe(
        `error [ADDRESS_IN_USE]: 127.0.0.1:${port} is already in use (another sessiond?); stop it or pick another port with --port <n> (or SESSIOND_PORT)\n`,
      );
    } finally {
      await new Promise<void>((done) => busy.close(() => done()));
    }
  });

  it("lets a running turn finish within the grace period", async () => {
    let started!: () => void;
    const running = new Promise<void>((resolve) => {
      started = resolve;
    });
    const slow: Runtime = {
      kind: "test",
      async *run(): AsyncGenerator<RuntimeEvent> {
        started();
        await new Promise((r) => setTimeout(r, 200));
        yield { type: "text", delta: "done slowly" };
      },
    };
    const gw = await startTestGateway({}, { runtimes: new Map([["main", slow]]), graceMs: 5000 });
    const pending = gw.api("/api/chat", postJson({ message: "x" }));
    await running;
    const closing = gw.stop();
    const res = await pending;
    expect(res.status).toBe(200);
    expect((await res.json()).reply).toBe("done slowly");
    await closing;
  });

  it("cancels a turn that outlives the grace period", async () => {
    const { stuck, running } = stuckRuntime();
    const gw = await startTestGateway({}, { runtimes: new Map([["main", stuck]]), graceMs: 100 });
    const pending = gw.api("/api/chat", postJson({ message: "x" })).catch((error: unknown) => error);
    await running;
    await gw.stop();
    await pending;
    expect(gw.logs.some((l) => l.msg === "grace period over: cancelling running turns")).toBe(true);
  });

  it("cancels an asynchronous turn (answered 202 already) that outlives the grace period", async () => {
    const { stuck, running } = stuckRuntime();
    const gw = await startTestGateway({}, { runtimes: new Map([["main", stuck]]), graceMs: 100 });
    const accepted = await gw.api("/api/chat?async=1", postJson({ message: "x" }));
    expect(accepted.status).toBe(202);
    await running;
    // No HTTP request is open: the grace period must still bound the turn, or stop() waits for ever.
    let late: NodeJS.Timeout | undefined;
    const stopped = await Promise.race([
      gw.stop().then(() => "stopped"),
      new Promise((r) => {
        late = setTimeout(() => r("still running after 30 s"), 30_000);
      }),
    ]);
    clearTimeout(late);
    expect(stopped).toBe("stopped");
    expect(gw.logs.some((l) => l.msg === "grace period over: cancelling running turns")).toBe(true);
  }, 60_000);
});
