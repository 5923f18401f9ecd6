import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { createChannels } from "../../src/channels/index.js";
import { loadConfig } from "../../src/config/load.js";
import { isSessiondError } from "../../src/model/errors.js";
import { waitFor } from "../support/child-output.js";
import { startLocalServer } from "../support/http-server.js";
import { startOpenAiServer } from "../support/openai-server.js";
import { serveGateway } from "../support/serve-child.js";
import { platformRoutes, sendJson } from "./support.js";

const CLI = resolve("dist/src/cli/main.js");
const TOKEN = "555:serve-test-token";
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "sessiond-channels-"));
  dirs.push(dir);
  return dir;
}

describe("channels in sessiond.yaml", () => {
  it("reads token files relative to the config and names a missing variable, never a value", () => {
    const dir = tempDir();
    writeFileSync(join(dir, "tg-token"), `${TOKEN}\n`);
    writeFileSync(
      join(dir, "sessiond.yaml"),
      stringify({ channels: { telegram: { token_file: "tg-token", secret_env: "TG_SECRET_MISSING" } } }),
    );
    const { config } = loadConfig({ cwd: dir, env: {} });
    expect(config.channels?.telegram?.token_file).toBe(join(dir, "tg-token"));
    let error: unknown;
    try {
      createChannels(config.channels ?? {}, { env: {} });
    } catch (e) {
      error = e;
    }
    expect(isSessiondError(error, "CONFIG_INVALID")).toBe(true);
    expect((error as Error).message).toBe(
      "channels.telegram.secret: the environment variable TG_SECRET_MISSING is not set",
    );
    // Switched off, nothing is read.
    expect(createChannels({ telegram: { enabled: false } }, { env: {} }).adapters).toEqual([]);
  });

  it("an unknown channel setting is reported with its path", () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, "sessiond.yaml"),
      stringify({ channels: { slack: { token_env: "T", signing_secret_env: "S", colour: "red" } } }),
    );
    expect(loadConfig({ cwd: dir, env: {} }).warnings.join("\n")).toContain("channels.slack.colour");
  });
});

/** A Telegram Update with a private message from user 9, posted to the gateway's webhook with the secret. */
function postUpdate(url: string, text: string) {
  return fetch(`${url}/channels/telegram`, {
    method: "POST",
    headers: { "x-telegram-bot-api-secret-token": "tg-webhook-secret" },
    body: JSON.stringify({
      update_id: 1,
      message: { message_id: 1, from: { id: 9 }, chat: { id: 9, type: "private" }, text },
    }),
  });
}

describe("sessiond serve with channels", () => {
  it("prints each channel's webhook URL, answers through it, and keeps the secrets out of its output", async () => {
    const dir = tempDir();
    let sent!: () => void;
    const delivered = new Promise<void>((r) => {
      sent = r;
    });
    const api = await startLocalServer(
      platformRoutes({
        [`POST /bot${TOKEN}/getMe`]: (_q, res) =>
          sendJson(res, 200, { ok: true, result: { id: 555, username: "b" } }),
        [`POST /bot${TOKEN}/sendMessage`]: (_q, res) => {
          sendJson(res, 200, { ok: true, result: {} });
          sent();
        },
      }),
    );
    writeFileSync(join(dir, "tg-token"), TOKEN);
    writeFileSync(
      join(dir, "sessiond.yaml"),
      stringify({
        channels: {
          telegram: { token_file: "tg-token", secret_env: "TG_SECRET", api_base_url: api.origin },
          slack: { token_env: "SLACK_TOKEN", signing_secret_env: "SLACK_SIGNING" },
        },
      }),
    );
    const child = spawn(process.execPath, [CLI, "serve", "--port", "0"], {
      cwd: dir,
      env: {
        ...process.env,
        SESSIOND_DATA_DIR: dir,
        SESSIOND_TOKEN: "gateway-token",
        SESSIOND_CONFIG: "",
        TG_SECRET: "tg-webhook-secret",
        SLACK_TOKEN: "xoxb-serve",
        SLACK_SIGNING: "slack-signing-serve",
      },
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
      await waitFor(child, /channel slack: /, output);
      expect(output.text).toContain(`channel telegram: webhook ${url}/channels/telegram\n`);
      expect(output.text).toContain(`channel slack: Events API request URL ${url}/channels/slack/events\n`);
      const res = await postUpdate(url as string, "via serve");
      expect(res.status).toBe(200);
      await delivered;
      const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      expect(output.text).toContain('"path":"/channels/telegram","status":200');
      for (const secret of ["serve-test-token", "tg-webhook-secret", "xoxb-serve", "slack-signing-serve"]) {
        expect(output.text).not.toContain(secret);
      }
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
      await api.close();
    }
  });

  it("starts with a Telegram Bot API that refuses connections: one warning line, the channel retrying in /health", async () => {
    const dir = tempDir();
    const probe = await startLocalServer(() => {});
    const closedOrigin = probe.origin;
    await probe.close();
    writeFileSync(
      join(dir, "sessiond.yaml"),
      stringify({
        channels: { telegram: { token_env: "TG_TOKEN", mode: "polling", api_base_url: closedOrigin } },
      }),
    );
    const child = spawn(process.execPath, [CLI, "serve", "--port", "0"], {
      cwd: dir,
      env: {
        ...process.env,
        SESSIOND_DATA_DIR: dir,
        SESSIOND_TOKEN: "gateway-token",
        SESSIOND_CONFIG: "",
        TG_TOKEN: TOKEN,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const output = { text: "" };
    const keep = (chunk: Buffer) => {
      output.text += chunk.toString();
    };
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    try {
      const [, url] = await waitFor(child, /listening on (http:\/\/127\.0\.0\.1:\d+)/, output);
      await waitFor(child, /warning: channel telegram cannot start yet .*\n/, output);
      const warnings = output.text.split("\n").filter((line) => line.startsWith("warning: channel telegram"));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain("telegram getMe could not connect");
      const health = (await (await fetch(`${url}/health`)).json()) as { status: string; channels: unknown[] };
      expect(health.status).toBe("ok");
      expect(health.channels).toMatchObject([{ channel: "telegram", state: "retrying" }]);
      const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
      child.kill("SIGTERM");
      expect(await exited).toBe(0);
      expect(output.text).not.toContain("unexpected failure");
      expect(output.text).not.toContain("serve-test-token");
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL");
    }
  });

  it("SIGTERM ends a channel turn that outlives --grace: the gateway exits instead of waiting for the model", async () => {
    const dir = tempDir();
    let reached!: () => void;
    const atModel = new Promise<void>((r) => {
      reached = r;
    });
    const model = await startOpenAiServer(async () => {
      reached();
      // Never answers (until the gateway hangs up).
      await new Promise(() => {});
      return { content: "never" };
    });
    const api = await startLocalServer(
      platformRoutes({
        [`POST /bot${TOKEN}/getMe`]: (_q, res) =>
          sendJson(res, 200, { ok: true, result: { id: 555, username: "b" } }),
        [`POST /bot${TOKEN}/sendMessage`]: (_q, res) => sendJson(res, 200, { ok: true, result: {} }),
      }),
    );
    writeFileSync(
      join(dir, "sessiond.yaml"),
      stringify({
        models: { local: { provider: "openai", base_url: model.baseUrl, model: "m" } },
        agents: [{ id: "main", model: "local" }],
        channels: { telegram: { token_env: "TG_TOKEN", secret_env: "TG_SECRET", api_base_url: api.origin } },
      }),
    );
    const served = serveGateway(dir, "gateway-token", ["--grace", "500"], {
      TG_TOKEN: TOKEN,
      TG_SECRET: "tg-webhook-secret",
    });
    const { child, output } = served;
    try {
      const url = await served.listening();
      await waitFor(child, /channel telegram: /, output);
      const res = await postUpdate(url, "hello");
      expect(res.status).toBe(200);
      await atModel;
      const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
      child.kill("SIGTERM");
      let late: NodeJS.Timeout | undefined;
      const outcome = await Promise.race([
        exited,
        new Promise((r) => {
          late = setTimeout(() => r("still running 30 s after SIGTERM"), 30_000);
        }),
      ]);
      clearTimeout(late);
      expect(outcome).toBe(0);
      expect(output.text).toContain("grace period over: cancelling running turns");
    } finally {
      served.kill();
      await api.close();
      await model.close();
    }
  }, 60_000);
});
