/**
 * The server side of `bench/gateway.ts`, in its own process so that its peak RSS is its own:
 * `node gateway-server.js gateway <db path> <data dir>` serves the gateway (echo runtime, SQLite store at the
 * path, strict durability, request log to /dev/null), `node gateway-server.js canned <db path> <data dir>` the
 * same gateway with every turn answered at once by one stored result (what the HTTP layer costs by itself),
 * `node gateway-server.js bare` a bare Hono handler.
 * Over IPC it sends `{ type: "ready", url }`, answers `{ type: "rss" }` with its RSS now and at peak,
 * `{ type: "loop" }` with the longest and p99 delay of its event loop since the last such question
 * (`monitorEventLoopDelay`, 10 ms resolution), takes `{ type: "stop" }`, closes and sends `{ type: "done", ... }`.
 */
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { createAdaptorServer } from "@hono/node-server";
import { Hono } from "hono";
import { createEngine } from "../src/engine.js";
import { limitHeapGrowth } from "../src/gateway/heap.js";
import { createGatewayLogger, logDestination } from "../src/gateway/logger.js";
import { startGateway } from "../src/gateway/server.js";
import { BENCH_TOKEN, webhookEnvelope, webhookPeer } from "./gateway-store.js";

export type ServerMessage =
  | { type: "ready"; url: string; rssKb: number }
  | { type: "rss"; rssKb: number; maxRssKb: number }
  | { type: "loop"; maxMs: number; p99Ms: number }
  | { type: "done"; maxRssKb: number; rssKb: number; cpuMs: number }
  | { type: "error"; message: string };

function send(message: ServerMessage): void {
  process.send?.(message);
}

async function serveBare(): Promise<{ url: string; close(): Promise<void> }> {
  const app = new Hono();
  app.post("/api/webhook", async (c) => {
    const body = (await c.req.json()) as { peer?: unknown; message?: unknown };
    return c.json({
      status: "ok",
      key: `p2p:${String(body.peer)}`,
      reply: `You said: ${JSON.stringify(body.message)}`,
    });
  });
  const server = createAdaptorServer({ fetch: app.fetch }) as Server;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function serveGateway(
  path: string,
  dataDir: string,
  canned: boolean,
): Promise<{ url: string; close(): Promise<void> }> {
  // As `sessiond serve` does.
  limitHeapGrowth();
  const config = { dataDir, store: { backend: "sqlite" as const, path } };
  const engine = await createEngine(config);
  if (canned) {
    const result = await engine.turn(webhookEnvelope(webhookPeer(0), "hello"));
    Object.assign(engine, { turn: async () => result });
  }
  const logger = createGatewayLogger({ destination: logDestination("/dev/null") });
  return startGateway({ engine, token: BENCH_TOKEN, port: 0, logger, graceMs: 2000 });
}

async function main(): Promise<void> {
  const [mode, path, dataDir] = process.argv.slice(2);
  const running =
    mode === "bare"
      ? await serveBare()
      : await serveGateway(path ?? "sessiond.db", dataDir ?? ".", mode === "canned");
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const onMessage = (message: { type?: string }) => {
    if (message.type === "loop") {
      send({ type: "loop", maxMs: loop.max / 1e6, p99Ms: loop.percentile(99) / 1e6 });
      loop.reset();
    }
    if (message.type === "rss")
      send({
        type: "rss",
        rssKb: Math.round(process.memoryUsage.rss() / 1024),
        maxRssKb: process.resourceUsage().maxRSS,
      });
    if (message.type !== "stop") return;
    process.off("message", onMessage);
    void running.close().then(() => {
      const usage = process.resourceUsage();
      send({
        type: "done",
        maxRssKb: usage.maxRSS,
        rssKb: Math.round(process.memoryUsage.rss() / 1024),
        cpuMs: (usage.userCPUTime + usage.systemCPUTime) / 1000,
      });
      process.disconnect?.();
    });
  };
  process.on("message", onMessage);
  send({ type: "ready", url: running.url, rssKb: Math.round(process.memoryUsage.rss() / 1024) });
}

main().catch((error: unknown) => {
  send({ type: "error", message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  process.exitCode = 1;
  process.disconnect?.();
});
