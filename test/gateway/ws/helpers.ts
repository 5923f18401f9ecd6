import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WebSocket } from "ws";
import type { GatewayDeps } from "../../../src/gateway/deps.js";
import {
  type AttachedWebSocket,
  attachWebSocket,
  type WebSocketOptions,
} from "../../../src/gateway/ws/index.js";
import { createEngine, type Engine, type Runtime } from "../../../src/index.js";

export const TOKEN = "test-token-0123456789";

export interface Frame {
  type: "res" | "event";
  id?: string | number | null;
  ok?: boolean;
  result?: Record<string, unknown>;
  error?: { code: string; message: string };
  event?: string;
  data?: Record<string, unknown>;
}

export interface Harness {
  engine: Engine;
  gateway: AttachedWebSocket;
  url(query?: Record<string, string>): string;
  close(): Promise<void>;
}

const quietLogger: GatewayDeps["logger"] = { info: () => {}, warn: () => {}, error: () => {} };

export async function startHarness(
  options: { runtime?: Runtime; ws?: WebSocketOptions; logger?: GatewayDeps["logger"] } = {},
): Promise<Harness> {
  const dataDir = mkdtempSync(join(tmpdir(), "sessiond-ws-"));
  const engine = await createEngine(
    { dataDir, titles: { enabled: false } },
    options.runtime ? { runtimes: new Map([["main", options.runtime]]) } : {},
  );
  const server: Server = createServer((_req, res) => res.writeHead(404).end());
  const deps: GatewayDeps = {
    engine,
    token: TOKEN,
    logger: options.logger ?? quietLogger,
  };
  const gateway = attachWebSocket(server, deps, options.ws);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    engine,
    gateway,
    url: (query = {}) => `ws://127.0.0.1:${port}/ws?${new URLSearchParams(query).toString()}`,
    async close() {
      await gateway.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await engine.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A protocol client that keeps every frame it received, in order. */
export class Client {
  readonly frames: Frame[] = [];
  private nextId = 1;
  private waiters: Array<{ match: (f: Frame) => boolean; resolve: (f: Frame) => void }> = [];
  readonly closed: Promise<number>;

  private constructor(readonly socket: WebSocket) {
    socket.on("message", (data) => {
      const frame = JSON.parse(String(data)) as Frame;
      this.frames.push(frame);
      this.waiters = this.waiters.filter((w) => {
        if (!w.match(frame)) return true;
        w.resolve(frame);
        return false;
      });
    });
    this.closed = new Promise((resolve) => socket.once("close", (code) => resolve(code)));
  }

  /** Connects with the token in the query unless `headers` carry it; resolves once `connected` arrived. */
  static async open(url: string, headers?: Record<string, string>): Promise<Client> {
    const socket = new WebSocket(url, headers ? { headers } : undefined);
    const client = new Client(socket);
    await client.next((f) => f.type === "event" && f.event === "connected");
    return client;
  }

  get connectionId(): string {
    const hello = this.frames.find((f) => f.event === "connected");
    return String(hello?.data?.connectionId);
  }

  /** The first frame (already received or still to come) that matches. */
  next(match: (f: Frame) => boolean): Promise<Frame> {
    const seen = this.frames.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => this.waiters.push({ match, resolve }));
  }

  sendRaw(text: string): void {
    this.socket.send(text);
  }

  request(method: string, params?: Record<string, unknown>): Promise<Frame> {
    const id = `r${this.nextId++}`;
    this.socket.send(JSON.stringify({ type: "req", id, method, ...(params ? { params } : {}) }));
    return this.next((f) => f.type === "res" && f.id === id);
  }

  /** The result of a request that must succeed. */
  async call(method: string, params?: Record<string, unknown>): Promise<Record<string, unknown>> {
    const res = await this.request(method, params);
    if (!res.ok) throw new Error(`${method} failed: ${JSON.stringify(res.error)}`);
    return res.result ?? {};
  }

  close(): Promise<number> {
    this.socket.close();
    return this.closed;
  }
}

/** The HTTP status an upgrade attempt was refused with, or "open" when it succeeded. */
export function upgradeStatus(url: string, headers?: Record<string, string>): Promise<number | "open"> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, headers ? { headers } : undefined);
    socket.once("unexpected-response", (_req, res) => {
      resolve(res.statusCode ?? 0);
      res.resume();
      socket.terminate();
    });
    socket.once("open", () => {
      resolve("open");
      socket.close();
    });
    // After a refusal terminate() reports the aborted handshake here; the promise is settled by then.
    socket.on("error", reject);
  });
}

/** The contents of the entries a `session.appended` event carries. */
export function appendedContents(frame: Frame): Array<string | undefined> {
  const entries = (frame.data?.entries ?? []) as Array<{ content?: string }>;
  return entries.map((e) => e.content);
}
