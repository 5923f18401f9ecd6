import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Engine } from "../../engine.js";
import { reportsBatchFallbacks } from "../../store/store.js";
import type { GatewayDeps } from "../deps.js";
import type { StoreFallback } from "../store-fallback.js";

/** One thing the gateway counts, as the recorder saw it (before prom-client is loaded, it waits in a buffer). */
export type Observation =
  | { kind: "turn"; agent: string; ok: boolean; seconds?: number }
  | { kind: "append"; entries: number; compactions: number }
  | { kind: "batch"; operations: number };

export interface MetricsRegistry {
  registry: Registry;
  record(observation: Observation): void;
  /** Observations the bounded buffer had no room for before the registry existed. */
  dropped(count: number): void;
}

/** The Prometheus registry of one gateway: a registry of its own, so two gateways never collide. */
export function buildRegistry(
  engine: Engine,
  storeFallback?: StoreFallback,
  channelStates?: GatewayDeps["channelStates"],
): MetricsRegistry {
  const registry = new Registry();
  if (channelStates) {
    new Gauge({
      name: "sessiond_channel_up",
      help: "1 while a chat platform channel is connected (or takes webhooks), 0 while it is retrying",
      labelNames: ["channel", "state"],
      registers: [registry],
      collect() {
        this.reset();
        for (const s of channelStates.list()) {
          this.set({ channel: s.channel, state: s.state }, s.state === "up" ? 1 : 0);
        }
      },
    });
  }
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
  if (reportsBatchFallbacks(engine.store)) {
    const store = engine.store;
    let counted = 0;
    new Counter({
      name: "sessiond_store_batch_fallbacks_total",
      help: "Store batches that failed on their quicker commit path and were committed the slower way (PostgreSQL)",
      registers: [registry],
      collect() {
        const { count } = store.batchFallbacks();
        if (count > counted) this.inc(count - counted);
        counted = count;
      },
    });
  }
  const dropped = new Counter({
    name: "sessiond_metrics_dropped_total",
    help: "Observations lost while the metrics were still loading (their buffer was full)",
    registers: [registry],
  });
  return {
    registry,
    dropped: (count) => dropped.inc(count),
    record(observation) {
      switch (observation.kind) {
        case "turn":
          turns.inc({ agent: observation.agent, outcome: observation.ok ? "ok" : "error" });
          if (observation.seconds !== undefined)
            latency.observe({ agent: observation.agent }, observation.seconds);
          break;
        case "append":
          appendSizes.observe(observation.entries);
          if (observation.compactions > 0) compactions.inc(observation.compactions);
          break;
        case "batch":
          batches.observe(observation.operations);
          break;
      }
    },
  };
}
