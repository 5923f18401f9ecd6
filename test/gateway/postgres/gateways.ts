import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import WebSocket from "ws";

const CLI = resolve("dist/src/cli/main.js");
export const TOKEN = "multi-gateway-token-0123456789";

export interface Gateway {
  url: string;
  child: ChildProcess;
  /** POST /api/chat on `session` (an `admin-…` key): status and body. */
  chat(session: string, message: string): Promise<{ status: number; body: Record<string, unknown> }>;
  stop(): Promise<void>;
}

/** Starts `sessiond serve` (the build) on the PostgreSQL database `databaseUrl`, answered by `modelUrl`. */
export async function startGateway(
  databaseUrl: string,
  modelUrl: string,
  leaseTtlMs: number,
): Promise<Gateway> {
  const dir = mkdtempSync(join(tmpdir(), "sessiond-pg-gw-"));
  writeFileSync(
    join(dir, "sessiond.yaml"),
    [
      `store: { backend: postgres, url: "${databaseUrl}", lease_ttl_ms: ${leaseTtlMs} }`,
      `models: { local: { provider: openai, base_url: "${modelUrl}", model: test-model } }`,
      "agents: [{ id: main, model: local }]",
      "titles: { enabled: false }",
      "compaction: { enabled: false }",
      "session: { max_queued_turns: 64 }",
      "",
    ].join("\n"),
  );
  const child = spawn(
    process.execPath,
    [CLI, "serve", "--port", "0", "--config", join(dir, "sessiond.yaml")],
    {
      cwd: dir,
      env: { ...process.env, SESSIOND_TOKEN: TOKEN, SESSIOND_DATA_DIR: dir, SESSIOND_CONFIG: "" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const url = await new Promise<string>((resolvePromise, reject) => {
    let text = "";
    const collect = (chunk: Buffer) => {
      text += chunk.toString();
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(text);
      if (match) resolvePromise(match[1]!);
    };
    child.stdout?.on("data", collect);
    child.stderr?.on("data", collect);
    child.on("exit", (code) => reject(new Error(`sessiond serve exited (${code}): ${text}`)));
  });
  return {
    url,
    child,
    async chat(session, message) {
      const response = await fetch(`${url}/api/chat`, {
        method: "POST",
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        body: JSON.stringify({ message, session_id: session }),
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGCONT");
        child.kill("SIGKILL");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface WsClient {
  request(
    method: string,
    params: Record<string, unknown>,
  ): Promise<{ ok: boolean; result?: unknown; error?: unknown }>;
  /** Resolves with the first event for which `match` is true. */
  event(match: (name: string, data: unknown) => boolean): Promise<unknown>;
  close(): void;
}

export async function connectWs(gateway: Gateway): Promise<WsClient> {
  const ws = new WebSocket(`${gateway.url.replace("http", "ws")}/ws?token=${TOKEN}&channel=web`);
  await new Promise((resolvePromise, reject) => {
    ws.once("open", resolvePromise);
    ws.once("error", reject);
  });
  let next = 0;
  const pending = new Map<string, (frame: { ok: boolean; result?: unknown; error?: unknown }) => void>();
  const watchers = new Set<(name: string, data: unknown) => void>();
  ws.on("message", (raw) => {
    const frame = JSON.parse(raw.toString()) as {
      type: string;
      id?: string;
      event?: string;
      data?: unknown;
      ok?: boolean;
    };
    if (frame.type === "res" && frame.id) pending.get(frame.id)?.(frame as { ok: boolean });
    if (frame.type === "event") for (const watch of watchers) watch(frame.event!, frame.data);
  });
  return {
    request(method, params) {
      const id = `r${++next}`;
      return new Promise((resolvePromise) => {
        pending.set(id, resolvePromise);
        ws.send(JSON.stringify({ type: "req", id, method, params }));
      });
    },
    event(match) {
      return new Promise((resolvePromise) => {
        const watch = (name: string, data: unknown) => {
          if (!match(name, data)) return;
          watchers.delete(watch);
          resolvePromise(data);
        };
        watchers.add(watch);
      });
    },
    close: () => ws.close(),
  };
}
