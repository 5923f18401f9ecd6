import { setMaxListeners } from "node:events";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import type { Engine } from "../engine.js";
import { SessiondError } from "../model/errors.js";
import { type ConnectionLimits, serverOptions } from "./connection-limits.js";
import { DEFAULT_GRACE_MS, DEFAULT_HOST, DEFAULT_PORT } from "./defaults.js";
import type { GatewayDeps, GatewayLogger } from "./deps.js";
import { DEFAULT_IDLE_HEAP_MS, shrinkFields, shrinkHeapWhenIdle } from "./idle-heap.js";
import { createGateway } from "./index.js";
import { createGatewayLogger } from "./logger.js";
import { fallbackWarning, type StoreFallback } from "./store-fallback.js";
import type { GatewayOptions } from "./types.js";

export { DEFAULT_GRACE_MS, DEFAULT_HOST, DEFAULT_PORT };

export interface StartGatewayOptions extends Omit<GatewayOptions, "shutdownSignal">, ConnectionLimits {
  /** Runs the turns, each on its agent's runtime (`createEngine(config)`). */
  engine: Engine;
  token: string;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 7420; 0 picks a free port. */
  port?: number;
  logger?: GatewayLogger;
  /** How long shutdown waits for running requests and turns before cancelling them; default 10 s. */
  graceMs?: number;
  /** Whether `close()` also closes the engine; default true. */
  closeEngine?: boolean;
  /** The configured store could not be opened: `/health` says degraded, `/metrics` and the log say why. */
  storeFallback?: StoreFallback;
  /**
   * Requests and WebSocket upgrades that arrive before this settles wait for it: the port is bound (a
   * taken one fails now) while start-up work such as recovery still runs, and nothing new is admitted
   * before it is done.
   */
  opening?: Promise<unknown>;
  /** The channels' states, shown in `/health` and `/metrics`. */
  channelStates?: GatewayDeps["channelStates"];
  /**
   * Work that shutdown waits for beside the open requests, within the same grace period (past it running
   * turns are cancelled, which lets it end): `sessiond serve` stops its channels and delivers their replies.
   */
  closing?: () => Promise<void>;
  /**
   * No request for this long, ms: the gateway gives the heap it no longer uses back (idle-heap.ts). Default
   * 5 s; 0 never (an embedder that manages its process's heap itself).
   */
  idleHeapMs?: number;
  /** Called with the listening server, e.g. to attach the WebSocket protocol to it. */
  onServer?: (server: Server, deps: GatewayDeps) => void;
}

export interface RunningGateway {
  /** `http://host:port`. */
  url: string;
  server: Server;
  deps: GatewayDeps;
  /** Stops accepting, lets requests and turns finish within the grace period (then cancels them), closes the engine. */
  close(): Promise<void>;
}

export async function startGateway(options: StartGatewayOptions): Promise<RunningGateway> {
  const { engine } = options;
  const shutdown = new AbortController();
  // Every running turn listens to this one signal (and removes its listener when done): no leak to warn of.
  setMaxListeners(0, shutdown.signal);
  const gateway = createGateway(engine, {
    token: options.token,
    logger: options.logger ?? createGatewayLogger(),
    ...(options.bodyLimit !== undefined ? { bodyLimit: options.bodyLimit } : {}),
    ...(options.trustProxyHeader ? { trustProxyHeader: options.trustProxyHeader } : {}),
    shutdownSignal: shutdown.signal,
    ...(options.webDir !== undefined ? { webDir: options.webDir } : {}),
    ...(options.publicRoutes ? { publicRoutes: options.publicRoutes } : {}),
    ...(options.storeFallback ? { storeFallback: options.storeFallback } : {}),
    ...(options.channelStates ? { channelStates: options.channelStates } : {}),
  });
  const { app, deps } = gateway;
  if (deps.storeFallback) deps.logger.warn({ ...deps.storeFallback }, fallbackWarning(deps.storeFallback));
  const opening = options.opening;
  let open = opening === undefined;
  const markOpen = () => {
    open = true;
  };
  // Settles whichever way the opening work ends: a failed start closes the gateway right after.
  const opened = Promise.resolve(opening).then(markOpen, markOpen);
  const fetch: typeof app.fetch = open
    ? app.fetch
    : (request, env, context) =>
        open ? app.fetch(request, env, context) : opened.then(() => app.fetch(request, env, context));
  const server = createAdaptorServer({ fetch, serverOptions: serverOptions(options) }) as Server;
  const host = options.host ?? DEFAULT_HOST;
  const port = options.port ?? DEFAULT_PORT;
  await new Promise<void>((resolve, reject) => {
    server.once("error", (error: NodeJS.ErrnoException) => reject(listenError(error, host, port)));
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  // prom-client loads once the caller has said it is ready, after start-up work such as recovery
  // (observations meanwhile wait in a buffer).
  const loadMetrics = () =>
    setImmediate(() => {
      gateway.metrics.load().catch((error: unknown) => {
        deps.logger.error(
          { err: error instanceof Error ? error.message : String(error) },
          "metrics: cannot load",
        );
      });
    });
  if (open) loadMetrics();
  else void opened.then(loadMetrics);
  const websocket = gateway.attachWebSocket(server);
  options.onServer?.(server, deps);
  if (!open) holdUpgrades(server, opened);
  const idleMs = options.idleHeapMs ?? DEFAULT_IDLE_HEAP_MS;
  const idleHeap =
    idleMs > 0
      ? shrinkHeapWhenIdle(server, {
          idleMs,
          onShrink: (shrink) => deps.logger.info(shrinkFields(shrink), "idle: unused heap given back"),
          onError: (error) =>
            deps.logger.warn(
              { err: error instanceof Error ? error.message : String(error) },
              "idle: heap not shrunk",
            ),
        })
      : undefined;
  const address = server.address() as AddressInfo;
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `http://${shownHost}:${address.port}`;

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      idleHeap?.stop();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const grace = options.graceMs ?? DEFAULT_GRACE_MS;
      // Upgraded sockets count as open connections: the WebSocket side finishes its turns within the same
      // grace period, then closes its sockets.
      const websocketClosed = websocket.close(grace);
      // Connections turn idle as their requests finish; close them as they do rather than at keep-alive timeout.
      server.closeIdleConnections();
      const idle = setInterval(() => server.closeIdleConnections(), 25);
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), grace);
      });
      const cancelRunning = () => {
        deps.logger.warn({ graceMs: grace }, "grace period over: cancelling running turns");
        shutdown.abort();
      };
      const closedAlso = options.closing?.();
      if (
        (await Promise.race([Promise.all([closed, websocketClosed, closedAlso]), timedOut])) === "timeout"
      ) {
        cancelRunning();
        await websocketClosed;
        server.closeAllConnections();
        await closed;
        await closedAlso;
      }
      clearInterval(idle);
      gateway.close();
      if (options.closeEngine !== false) {
        // Turns no request waits on (asynchronous ones, answered 202; channel messages) drain with the
        // engine: the same grace period bounds them.
        const engineClosed = engine.close();
        const drained = engineClosed.then(() => "closed" as const);
        if (!shutdown.signal.aborted && (await Promise.race([drained, timedOut])) === "timeout")
          cancelRunning();
        await engineClosed;
      }
      clearTimeout(timer);
    })();
    return closing;
  };
  return { url, server, deps, close };
}

/** At most this many upgrades wait for the gateway to open; more are refused. */
const MAX_HELD_UPGRADES = 256;

/** Upgrades before `opened` wait for it, then go to the listeners that serve them. */
function holdUpgrades(server: Server, opened: Promise<void>): void {
  const listeners = server.listeners("upgrade") as Array<(...args: unknown[]) => void>;
  server.removeAllListeners("upgrade");
  const held: unknown[][] = [];
  const hold = (...args: unknown[]) => {
    if (held.length < MAX_HELD_UPGRADES) held.push(args);
    else (args[1] as { destroy(): void }).destroy();
  };
  server.on("upgrade", hold);
  void opened.then(() => {
    server.off("upgrade", hold);
    for (const listener of listeners) server.on("upgrade", listener);
    for (const args of held.splice(0)) server.emit("upgrade", ...args);
  });
}

/** A busy address as one line with what to do about it; other listen errors as they are. */
function listenError(error: NodeJS.ErrnoException, host: string, port: number): Error {
  if (error.code !== "EADDRINUSE") return error;
  return new SessiondError(
    "ADDRESS_IN_USE",
    `${host}:${port} is already in use (another sessiond?); stop it or pick another port with --port <n> (or SESSIOND_PORT)`,
    { cause: error },
  );
}
