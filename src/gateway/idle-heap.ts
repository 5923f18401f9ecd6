import { type Server, ServerResponse } from "node:http";
import { performance } from "node:perf_hooks";
import { getHeapStatistics } from "node:v8";

/** How long the gateway goes without a request before it gives its unused heap back, ms. */
export const DEFAULT_IDLE_HEAP_MS = 5_000;
/** How much the committed heap must have grown since the last shrink for another to be worth it. */
export const IDLE_HEAP_MIN_GROWTH_BYTES = 16 * 1024 * 1024;
/** Once idle, the share of the event loop's time in use above which a second shrink waits (background work). */
const BUSY_LOOP = 0.2;
const IDLE_CHECK_MS = 1_000;

/** What one shrink gave back: the V8 heap's committed and used bytes, and the process's RSS, before and after. */
export interface HeapShrink {
  heapBefore: number;
  heapAfter: number;
  usedBefore: number;
  usedAfter: number;
  rssBefore: number;
  rssAfter: number;
  /** How long the collection held the event loop, ms. */
  ms: number;
}

/** A shrink as log fields: MB, to 0.1. */
export function shrinkFields(shrink: HeapShrink): Record<string, number> {
  const mb = (bytes: number) => Math.round(bytes / 104_857.6) / 10;
  return {
    heapMb: mb(shrink.heapBefore),
    heapAfterMb: mb(shrink.heapAfter),
    usedMb: mb(shrink.usedBefore),
    usedAfterMb: mb(shrink.usedAfter),
    rssMb: mb(shrink.rssBefore),
    rssAfterMb: mb(shrink.rssAfter),
    ms: Math.round(shrink.ms),
  };
}

export interface IdleHeapOptions {
  /** Default `DEFAULT_IDLE_HEAP_MS`. */
  idleMs?: number;
  /** Default `IDLE_HEAP_MIN_GROWTH_BYTES`. */
  minGrowthBytes?: number;
  onShrink?: (shrink: HeapShrink) => void;
  onError?: (error: unknown) => void;
  /** The collection itself (tests count calls); default `collectForLowMemory`. */
  collect?: () => Promise<void>;
  /** The committed heap in bytes; default V8's `total_heap_size`. */
  committedBytes?: () => number;
  /** Milliseconds, monotonic; default `performance.now`. */
  now?: () => number;
  /** The share of time the event loop was in use since the last call; default from `eventLoopUtilization`. */
  loopUse?: () => number;
}

function loopUseSinceLastCall(): () => number {
  let last = performance.eventLoopUtilization();
  return () => {
    const used = performance.eventLoopUtilization(last).utilization;
    last = performance.eventLoopUtilization();
    return used;
  };
}

export interface IdleHeapWatch {
  stop(): void;
}

/**
 * V8's own "low memory" collection (`Isolate::LowMemoryNotification`, what DevTools' "collect garbage" runs,
 * reached through an in-process inspector session: no flag, no port): full collections that compact, shrink
 * the young generation to its minimum and unmap the pages V8 keeps pooled. A plain full GC (`--expose-gc`'s
 * `gc()`) does neither of the last two, and V8's memory reducer does not start once allocation has stopped.
 * Holds the event loop while it runs (tens of ms for a heap of tens of MB).
 */
export async function collectForLowMemory(): Promise<void> {
  const { Session } = await import("node:inspector");
  const session = new Session();
  session.connect();
  try {
    await new Promise<void>((resolve, reject) => {
      session.post("HeapProfiler.collectGarbage", (error) => (error ? reject(error) : resolve()));
    });
  } finally {
    session.disconnect();
  }
}

/**
 * Gives the heap V8 keeps for garbage back to the system once the gateway is idle. After a burst (say 0.9 MB
 * messages) V8 keeps its young generation at its largest and the pages the burst's garbage held, and collects
 * them only when allocation brings it to its next limit: an idle gateway then holds them for good. So: once
 * no request has been open for `idleMs` and the committed heap has grown by `minGrowthBytes` since the last
 * shrink, one low-memory collection. While still idle it looks again every second, and shrinks again only
 * if the heap grew as much once more with the event loop mostly free over that second (background work, such
 * as the search index catching up, has settled). A request re-arms it.
 */
export function shrinkHeapWhenIdle(server: Server, options: IdleHeapOptions = {}): IdleHeapWatch {
  const idleMs = Math.max(1, options.idleMs ?? DEFAULT_IDLE_HEAP_MS);
  const minGrowth = options.minGrowthBytes ?? IDLE_HEAP_MIN_GROWTH_BYTES;
  const collect = options.collect ?? collectForLowMemory;
  const committed = options.committedBytes ?? (() => getHeapStatistics().total_heap_size);
  const now = options.now ?? (() => performance.now());
  const loopUse = options.loopUse ?? loopUseSinceLastCall();
  let lastRequest = now();
  let shrunkSinceRequest = false;
  let baseline = committed();
  let running = false;
  let stopped = false;

  let inFlight = 0;
  const onRequest = (_request: unknown, response: unknown) => {
    lastRequest = now();
    shrunkSinceRequest = false;
    // A request that takes longer than idleMs (a turn) is no idle time: counted from when its answer is done.
    // An upgrade's socket stays open (WebSocket): its messages are seen through the loop's use instead.
    if (!(response instanceof ServerResponse)) return;
    inFlight++;
    response.once("close", () => {
      inFlight--;
      lastRequest = now();
    });
  };
  const shrink = async () => {
    running = true;
    shrunkSinceRequest = true;
    const before = process.memoryUsage();
    const start = performance.now();
    try {
      await collect();
      const after = process.memoryUsage();
      baseline = committed();
      options.onShrink?.({
        heapBefore: before.heapTotal,
        heapAfter: after.heapTotal,
        usedBefore: before.heapUsed,
        usedAfter: after.heapUsed,
        rssBefore: before.rss,
        rssAfter: after.rss,
        ms: performance.now() - start,
      });
    } catch (error) {
      // A Node built without the inspector: no way to ask, so no more asking.
      if ((error as { code?: unknown } | undefined)?.code === "ERR_INSPECTOR_NOT_AVAILABLE") stopped = true;
      options.onError?.(error);
    } finally {
      running = false;
    }
  };
  const check = () => {
    if (stopped) return;
    const quietFor = inFlight > 0 ? 0 : now() - lastRequest;
    const used = loopUse();
    if (quietFor < idleMs) return schedule(idleMs - quietFor);
    const grown = committed() - baseline >= minGrowth;
    const settled = !shrunkSinceRequest || used < BUSY_LOOP;
    // Idle: looked at every second (a heap statistic and the loop's use), so background work that ends is
    // followed by its shrink within about a second.
    if (grown && settled && !running) void shrink().finally(() => schedule(IDLE_CHECK_MS));
    else schedule(IDLE_CHECK_MS);
  };
  let timer: NodeJS.Timeout | undefined;
  const schedule = (ms: number) => {
    if (stopped) return;
    timer = setTimeout(check, Math.max(1, ms));
    // Never what keeps the process alive.
    timer.unref();
  };
  server.on("request", onRequest);
  server.on("upgrade", onRequest);
  schedule(idleMs);
  return {
    stop: () => {
      stopped = true;
      clearTimeout(timer);
      server.off("request", onRequest);
      server.off("upgrade", onRequest);
    },
  };
}
