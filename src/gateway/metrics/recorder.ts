import type { Registry } from "prom-client";
import type { Engine } from "../../engine.js";
import { isCommitObservable } from "../../store/store.js";
import type { SessionEvent } from "../../turns/events.js";
import type { GatewayDeps } from "../deps.js";
import type { StoreFallback } from "../store-fallback.js";
import type { MetricsRegistry, Observation } from "./registry.js";

/** Observations kept while prom-client loads; more are counted in sessiond_metrics_dropped_total. */
export const PENDING_OBSERVATIONS_MAX = 10_000;

export interface GatewayMetrics {
  /** Loads prom-client and builds the registry, once: `startGateway` calls it after listening, `/metrics` too. */
  load(): Promise<Registry>;
  /** Stops listening to the engine's events. */
  stop(): void;
}

/**
 * Prometheus metrics fed by `engine.events`. prom-client is loaded after the gateway listens (or on the first
 * `/metrics`), so start-up does not pay for it; what happens before waits in a bounded buffer.
 */
export function createMetrics(
  engine: Engine,
  storeFallback?: StoreFallback,
  channelStates?: GatewayDeps["channelStates"],
): GatewayMetrics {
  let target: MetricsRegistry | undefined;
  let pending: Observation[] = [];
  let dropped = 0;
  const record = (observation: Observation): void => {
    if (target) target.record(observation);
    else if (pending.length < PENDING_OBSERVATIONS_MAX) pending.push(observation);
    else dropped++;
  };
  let loading: Promise<Registry> | undefined;
  const load = () => {
    loading ??= import("./registry.js").then(({ buildRegistry }) => {
      const built = buildRegistry(engine, storeFallback, channelStates);
      for (const observation of pending) built.record(observation);
      if (dropped > 0) built.dropped(dropped);
      pending = [];
      target = built;
      return built.registry;
    });
    return loading;
  };
  const offCommits = isCommitObservable(engine.store)
    ? engine.store.observeCommits((operations) => record({ kind: "batch", operations }))
    : () => {};
  // Lanes run one turn per key at a time, so a key's start and finish events pair up in order.
  const started = new Map<string, number>();
  const onEvent = (event: SessionEvent) => {
    switch (event.type) {
      case "turn.started":
        started.set(event.key, performance.now());
        break;
      case "turn.finished": {
        const at = started.get(event.key);
        started.delete(event.key);
        record({
          kind: "turn",
          agent: event.agent,
          ok: event.ok,
          ...(at !== undefined ? { seconds: (performance.now() - at) / 1000 } : {}),
        });
        break;
      }
      case "appended":
        record({
          kind: "append",
          entries: event.entries.length,
          compactions: event.entries.filter((entry) => entry.type === "compaction").length,
        });
        break;
      default:
        break;
    }
  };
  // This process's turns and appends only: another gateway's are in its own metrics, and relaying them
  // here would read each of its appends back from the database (foreign-events.ts).
  const off = engine.events.on(onEvent, { localOnly: true });
  return {
    load,
    stop: () => {
      off();
      offCommits();
    },
  };
}
