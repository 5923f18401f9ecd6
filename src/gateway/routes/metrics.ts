import type { OpenAPIHono } from "@hono/zod-openapi";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Engine } from "../../engine.js";
import { isCommitObservable } from "../../store/store.js";
import type { StoreFallback } from "../store-fallback.js";
import type { GatewayEnv, RouteDeps } from "../types.js";
import { createRoute, documentedRoutes, z } from "./openapi-kit.js";

export interface GatewayMetrics {
  registry: Registry;
  /** Stops listening to the engine's events. */
  stop(): void;
}

/** Prometheus metrics fed by `engine.events`; a registry of its own, so two gateways never collide. */
export function createMetrics(engine: Engine, storeFallback?: StoreFallback): GatewayMetrics {
  const registry = new Registry();
  const fallback = new Gauge({
    name: "sessiond_store_fallback",
    help: "1 while the gateway runs on the memory store because the configured one could not be opened",
    labelNames: ["configured"],
    registers: [registry],
  });
  fallback.set({ configured: storeFallback?.configured ?? engine.store.backend }, storeFallback ? 1 : 0);
  const turns = new Counter({
    name: "sessiond_turns_total",
    help: "Turns finished, by agent and outcome",
    labelNames: ["agent", "outcome"],
    registers: [registry],
  });
  const latency = new Histogram({
    name: "sessiond_turn_duration_seconds",
    help: "Turn latency from start (after queueing) to the stored reply",
    labelNames: ["agent"],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [registry],
  });
  new Gauge({
    name: "sessiond_queue_depth",
    help: "Turns running or waiting, over all sessions",
    registers: [registry],
    collect() {
      let total = 0;
      for (const n of engine.queued().values()) total += n;
      this.set(total);
    },
  });
  new Gauge({
    name: "sessiond_turns_stuck",
    help: "Running turns whose runtime sent no event for turns.stuck_after",
    registers: [registry],
    collect() {
      this.set(engine.running().filter((turn) => turn.stuck).length);
    },
  });
  const compactions = new Counter({
    name: "sessiond_compactions_total",
    help: "Compactions stored",
    registers: [registry],
  });
  const appendSizes = new Histogram({
    name: "sessiond_append_entries",
    help: "Entries per stored append",
    buckets: [1, 2, 4, 8, 16, 32, 64, 128],
    registers: [registry],
  });
  const batches = new Histogram({
    name: "sessiond_store_commit_batch_size",
    help: "Write operations (appends, resets, updates) per store transaction",
    buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048],
    registers: [registry],
  });
  const offCommits = isCommitObservable(engine.store)
    ? engine.store.observeCommits((operations) => batches.observe(operations))
    : () => {};
  // Lanes run one turn per key at a time, so a key's start and finish events pair up in order.
  const started = new Map<string, number>();
  const off = engine.events.on((event) => {
    switch (event.type) {
      case "turn.started":
        started.set(event.key, performance.now());
        break;
      case "turn.finished": {
        turns.inc({ agent: event.agent, outcome: event.ok ? "ok" : "error" });
        const at = started.get(event.key);
        started.delete(event.key);
        if (at !== undefined) latency.observe({ agent: event.agent }, (performance.now() - at) / 1000);
        break;
      }
      case "appended":
        appendSizes.observe(event.entries.length);
        for (const entry of event.entries) if (entry.type === "compaction") compactions.inc();
        break;
      default:
        break;
    }
  });
  return {
    registry,
    stop: () => {
      off();
      offCommits();
    },
  };
}

export const metricsOperations = {
  metrics: createRoute({
    method: "get",
    path: "/metrics",
    summary: "Prometheus metrics",
    responses: {
      200: {
        description: "text exposition format",
        content: { "text/plain": { schema: z.string() } },
      },
    },
  }),
};

export function metricsRoutes(_deps: RouteDeps, metrics: GatewayMetrics): OpenAPIHono<GatewayEnv> {
  const app = documentedRoutes();
  app.openapi(metricsOperations.metrics, async (c) => {
    const text = await metrics.registry.metrics();
    return c.text(text, 200, { "content-type": metrics.registry.contentType });
  });
  return app;
}
