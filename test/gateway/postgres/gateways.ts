import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pg from "pg";
import { afterAll, afterEach, beforeAll } from "vitest";
import WebSocket from "ws";
import { type OpenAiServer, startOpenAiServer } from "../../support/openai-server.js";
import { type PostgresCluster, startPostgres } from "../../support/postgres.js";

const CLI = resolve("dist/src/cli/main.js");
export const TOKEN = "multi-gateway-token-0123456789";

export interface Gateway {
  url: string;
  child: ChildProcess;
  /** POST /api/chat on `session` (an `admin-…` key): status and body. */
  chat(session: string, message: string): Promise<{ status: number; body: Record<string, unknown> }>;
  /** Any authorised request: status and JSON body. */
  api(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: Record<string, unknown> }>;
  /** POST /api/chat?async=1: the admitted turn's id (the input is in the inbox when this resolves). */
  start(session: string, message: string): Promise<string>;
  /** Resolves once the process printed a line matching `pattern`, with that line. */
  printed(pattern: RegExp): Promise<string>;
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
      // \`other\`: what an agent edited through the API may switch to (its requests name other-model).
      `models: { local: { provider: openai, base_url: "${modelUrl}", model: test-model }, other: { provider: openai, base_url: "${modelUrl}", model: other-model } }`,
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
  let text = "";
  const watchers = new Set<() => void>();
  const collect = (chunk: Buffer) => {
    text += chunk.toString();
    for (const watch of watchers) watch();
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  const printed = (pattern: RegExp) =>
    new Promise<string>((resolvePromise, reject) => {
      const watch = () => {
        // Whole lines only: a chunk may end inside one.
        const line = text
          .split("\n")
          .slice(0, -1)
          .find((l) => pattern.test(l));
        if (line !== undefined) {
          watchers.delete(watch);
          resolvePromise(line);
        } else if (child.exitCode !== null || child.signalCode !== null) {
          watchers.delete(watch);
          reject(new Error(`sessiond serve exited without printing ${pattern}: ${text}`));
        }
      };
      watchers.add(watch);
      child.once("exit", watch);
      watch();
    });
  const url = (await printed(/listening on http:\/\/127\.0\.0\.1:\d+/)).replace(
    /^.*listening on (\S+).*$/,
    "$1",
  );
  const post = (session: string, message: string, query = "") =>
    fetch(`${url}/api/chat${query}`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ message, session_id: session }),
    });
  return {
    url,
    child,
    async chat(session, message) {
      const response = await post(session, message);
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    },
    async start(session, message) {
      const response = await post(session, message, "?async=1");
      const body = (await response.json()) as { id?: string };
      if (response.status !== 202 || !body.id) {
        throw new Error(`async chat answered ${response.status}: ${JSON.stringify(body)}`);
      }
      return body.id;
    },
    printed,
    async api(method, path, body) {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
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

/**
 * `promise`, or a failure naming `what` after `ms`: generous bounds for waits on other processes, so a
 * stuck one fails with what it was waiting for instead of the test's timeout.
 */
export async function within<T>(ms: number, what: string | (() => string), promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(new Error(`still waiting after ${ms / 1000} s: ${typeof what === "string" ? what : what()}`)),
      ms,
    );
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** One statement on the database, on a connection of its own. */
export async function queryDb<R extends object>(url: string, sql: string): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(sql)).rows;
  } finally {
    await client.end();
  }
}

/** A test file's throwaway cluster and fake model server, and the gateways each test starts on them. */
export interface MultiGatewaySuite {
  readonly cluster: PostgresCluster;
  readonly model: OpenAiServer;
  /** `count` gateways on a new database of their own (stopped after the test): its URL, and them. */
  gatewaysOn(count: number, leaseTtlMs: number): Promise<[string, Gateway[]]>;
  /** One more gateway on the database `url`, stopped after the test. */
  another(url: string, leaseTtlMs: number): Promise<Gateway>;
}

/** Registers the file's hooks: cluster and model before all, gateways stopped after each test. */
export function multiGatewaySuite(): MultiGatewaySuite {
  let cluster: PostgresCluster | undefined;
  let model: OpenAiServer | undefined;
  const gateways: Gateway[] = [];
  beforeAll(async () => {
    cluster = await startPostgres();
    model = await startOpenAiServer();
  });
  afterEach(async () => {
    await Promise.all(gateways.splice(0).map((g) => g.stop()));
  });
  afterAll(async () => {
    await model?.close();
    await cluster?.remove();
  });
  const suite: MultiGatewaySuite = {
    get cluster() {
      return cluster!;
    },
    get model() {
      return model!;
    },
    async another(url, leaseTtlMs) {
      const gateway = await startGateway(url, model!.baseUrl, leaseTtlMs);
      gateways.push(gateway);
      return gateway;
    },
    async gatewaysOn(count, leaseTtlMs) {
      const url = await cluster!.createDatabase();
      const started = await Promise.all(Array.from({ length: count }, () => suite.another(url, leaseTtlMs)));
      return [url, started];
    },
  };
  return suite;
}
