import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EngineConfig } from "../../../src/config/engine-config.js";
import { createEngine, type Engine } from "../../../src/engine.js";
import type { GatewayLogger } from "../../../src/gateway/deps.js";
import { type RunningGateway, type StartGatewayOptions, startGateway } from "../../../src/gateway/server.js";
import type { Runtime } from "../../../src/model/runtime.js";

export const TOKEN = "test-token-0123456789";

/** The JSON bodies the gateway answers with, loosely: each test reads the fields it checks. */
export interface Body {
  error: { code: string; message: string };
  status: string;
  key: string;
  session_id: string;
  reply: string | null;
  session: { key: string; agent: string; generation: number };
  sessions: Array<{ key: string; lastCompaction: unknown; queuedTurns: number }>;
  nextCursor?: string;
  entries: Array<{ type: string; role: string; content: string }>;
  summary: string;
  current: { generation: number };
  deleted: { sessions: number; entries: number };
  openapi: string;
  paths: Record<string, unknown>;
}

export interface ApiResponse extends Response {
  json(): Promise<Body>;
}

export function json(res: Response): Promise<Body> {
  return res.json() as Promise<Body>;
}

export interface TestGateway extends RunningGateway {
  engine: Engine;
  logs: Array<Record<string, unknown>>;
  dataDir: string;
  /** fetch against the gateway with the token. */
  api(path: string, init?: RequestInit): Promise<ApiResponse>;
  stop(): Promise<void>;
}

export function memoryLogger(logs: Array<Record<string, unknown>>): GatewayLogger {
  const write = (level: string) => (fields: Record<string, unknown>, message?: string) => {
    logs.push({ level, ...fields, ...(message ? { msg: message } : {}) });
  };
  return { info: write("info"), warn: write("warn"), error: write("error") };
}

export interface TestGatewayOptions extends Partial<StartGatewayOptions> {
  /** Fixed runtimes per agent, given to the engine (`createEngine(config, { runtimes })`). */
  runtimes?: Map<string, Runtime>;
}

export async function startTestGateway(
  config: EngineConfig = {},
  { runtimes, ...options }: TestGatewayOptions = {},
): Promise<TestGateway> {
  const dataDir = mkdtempSync(join(tmpdir(), "sessiond-gw-"));
  const fullConfig: EngineConfig = {
    dataDir,
    store: { backend: "memory" },
    titles: { enabled: false },
    ...config,
    lifecycle: { sweepIntervalMs: 0, ...config.lifecycle },
  };
  const engine = await createEngine(fullConfig, runtimes ? { runtimes } : {});
  const logs: Array<Record<string, unknown>> = [];
  const gateway = await startGateway({
    engine,
    token: TOKEN,
    port: 0,
    logger: memoryLogger(logs),
    graceMs: 2000,
    // The dashboard's files only where a test asks for them: elsewhere unknown paths stay 404/401.
    webDir: false,
    ...options,
  });
  return {
    ...gateway,
    engine,
    logs,
    dataDir,
    api: (path, init = {}) => {
      const headers = new Headers(init.headers);
      if (!headers.has("authorization")) headers.set("authorization", `Bearer ${TOKEN}`);
      return fetch(`${gateway.url}${path}`, { ...init, headers }) as Promise<ApiResponse>;
    },
    stop: async () => {
      await gateway.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export function postJson(body: unknown, headers: Record<string, string> = {}): RequestInit {
  return {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  };
}

/** Every route that reads a JSON body, with the method it takes (`fuzz:branching`: a key a test may seed). */
export const BODY_ROUTES: ReadonlyArray<[method: string, path: string]> = [
  ["POST", "/api/chat"],
  ["POST", "/api/webhook"],
  ["POST", "/api/app/bob"],
  ["POST", "/api/app/bob/s1"],
  ["POST", "/api/hooks/main/push"],
  ["POST", "/v1/chat/completions"],
  ["PATCH", "/api/agents/main"],
  ["POST", "/api/agents/main/duplicate"],
  ["POST", "/api/sessions/fuzz%3Abranching/fork"],
  ["POST", "/api/sessions/fuzz%3Abranching/rewind"],
];
