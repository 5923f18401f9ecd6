import { randomUUID } from "node:crypto";
import type { IncomingMessage, Server } from "node:http";
import type { Duplex } from "node:stream";
import { type RawData, WebSocket, WebSocketServer } from "ws";
import { withIncomingTrace } from "../../tracing/spans.js";
import type { GatewayDeps } from "../deps.js";
import { presentedToken, tokenMatches } from "./auth.js";
import { type Connection, type ConnectionParams, connectionParams } from "./connection.js";
import { handlerFor } from "./handlers/index.js";
import { RunningTurns } from "./kill.js";
import { GuardedSender, type WebSocketLimits, WS_LIMIT_DEFAULTS } from "./limits.js";
import { type ParsedFrame, parseFrame, type ServerFrame, wireError } from "./protocol.js";

export interface WebSocketOptions extends WebSocketLimits {
  /** The upgrade path; default `/ws`. */
  path?: string;
  /** The largest frame accepted, in bytes; a larger one closes the connection with 1009. Default 1 MiB. */
  maxPayload?: number;
}

export interface AttachedWebSocket {
  /**
   * Stops accepting upgrades and requests, lets running requests (chat turns) finish for up to `graceMs`
   * (default 0), cancels what is left, then closes every connection (1001).
   */
  close(graceMs?: number): Promise<void>;
}

const DEFAULT_MAX_PAYLOAD = 1024 * 1024;

/** Serves the WebSocket protocol (`req`/`res`/`event` frames) on `server`'s upgrades to `path`. */
export function attachWebSocket(
  server: Server,
  deps: GatewayDeps,
  options: WebSocketOptions = {},
): AttachedWebSocket {
  const path = options.path ?? "/ws";
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxPayload ?? DEFAULT_MAX_PAYLOAD });
  const turns = new RunningTurns();
  const limits: Required<WebSocketLimits> = { ...WS_LIMIT_DEFAULTS };
  for (const name of Object.keys(WS_LIMIT_DEFAULTS) as Array<keyof WebSocketLimits>) {
    const value = options[name];
    if (value !== undefined) limits[name] = value;
  }
  const pending = new Set<Promise<void>>();
  let closing: Promise<void> | undefined;

  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    const url = new URL(request.url ?? "/", "http://localhost");
    if (url.pathname !== path) {
      // Another upgrade listener may serve this path; when there is none, nobody would answer.
      if (server.listenerCount("upgrade") === 1) refuse(socket, 404, "Not Found");
      return;
    }
    if (closing || !tokenMatches(presentedToken(request, url), deps.token)) {
      if (!closing)
        deps.logger.warn({ remote: request.socket.remoteAddress }, "websocket: refused, bad token");
      refuse(socket, closing ? 503 : 401, closing ? "Service Unavailable" : "Unauthorized");
      return;
    }
    // One token for every client: the cap on its connections is the cap on all of them.
    if (wss.clients.size >= limits.maxConnections) {
      deps.logger.warn({ connections: wss.clients.size }, "websocket: refused, too many connections");
      refuse(socket, 429, "Too Many Requests", "TOO_MANY_CONNECTIONS");
      return;
    }
    const params = connectionParams(randomUUID(), url.searchParams);
    // The upgrade request's W3C traceparent, when it has one, is the caller's trace for the connection's turns.
    const trace = {
      parent: headerOf(request.headers.traceparent),
      state: headerOf(request.headers.tracestate),
    };
    wss.handleUpgrade(request, socket, head, (ws) => serve(ws, params, trace));
  };

  const serve = (
    ws: WebSocket,
    params: ConnectionParams,
    trace: { parent?: string; state?: string },
  ): void => {
    const sender = new GuardedSender(ws, limits, deps.logger, params.id);
    const send = (frame: ServerFrame): void => {
      if (ws.readyState === WebSocket.OPEN) sender.send(JSON.stringify(frame));
    };
    let inFlight = 0;
    const connection: Connection = {
      params,
      subscriptions: new Map(),
      send,
      event: (event, data) => send({ type: "event", event, data }),
    };
    deps.logger.info({ connection: params.id, channel: params.channel }, "websocket: connected");
    connection.event("connected", { connectionId: params.id, channel: params.channel, peer: params.peer });

    ws.on("message", (data: RawData, isBinary: boolean) => {
      const parsed: ParsedFrame = isBinary
        ? { ok: false, id: null, error: { code: "BAD_FRAME", message: "binary frames are not accepted" } }
        : parseFrame(textOf(data));
      if (!parsed.ok) {
        connection.send({ type: "res", id: parsed.id, ok: false, error: parsed.error });
        return;
      }
      const request = parsed.frame;
      if (closing) {
        connection.send({
          type: "res",
          id: request.id,
          ok: false,
          error: { code: "SHUTTING_DOWN", message: "the gateway is shutting down" },
        });
        return;
      }
      const handler = handlerFor(request.method);
      if (!handler) {
        connection.send({
          type: "res",
          id: request.id,
          ok: false,
          error: { code: "UNKNOWN_METHOD", message: `unknown method ${JSON.stringify(request.method)}` },
        });
        return;
      }
      if (inFlight >= limits.maxInFlight) {
        connection.send({
          type: "res",
          id: request.id,
          ok: false,
          error: {
            code: "TOO_MANY_REQUESTS",
            message: `${limits.maxInFlight} requests are already running on this connection; wait for their replies`,
          },
        });
        return;
      }
      inFlight++;
      // Requests run concurrently (up to maxInFlight): a sessions.kill must get through while a chat.send streams.
      // A frame's own traceparent (with its tracestate) replaces the connection's for this request.
      const [parent, state] =
        request.traceparent !== undefined
          ? [request.traceparent, request.tracestate]
          : [trace.parent, trace.state];
      const task = withIncomingTrace(parent, state, () =>
        handler(request.params, { deps, turns, connection, request }),
      ).then(
        (result) => connection.send({ type: "res", id: request.id, ok: true, result }),
        (error: unknown) => {
          const wire = wireError(error);
          if (wire.code === "INTERNAL") {
            deps.logger.error(
              { connection: params.id, method: request.method, err: String(error) },
              "websocket: request failed",
            );
          }
          connection.send({ type: "res", id: request.id, ok: false, error: wire });
        },
      );
      pending.add(task);
      void task.finally(() => {
        inFlight--;
        pending.delete(task);
      });
    });

    ws.on("close", (code) => {
      sender.dispose();
      for (const unsubscribe of connection.subscriptions.values()) unsubscribe();
      connection.subscriptions.clear();
      deps.logger.info({ connection: params.id, code }, "websocket: closed");
    });
    ws.on("error", (error) => {
      deps.logger.warn({ connection: params.id, err: error.message }, "websocket: connection error");
    });
  };

  server.on("upgrade", onUpgrade);

  return {
    close(graceMs = 0) {
      closing ??= (async () => {
        server.off("upgrade", onUpgrade);
        if (pending.size > 0 && graceMs > 0) {
          let timer: NodeJS.Timeout | undefined;
          await Promise.race([
            Promise.allSettled([...pending]),
            new Promise((resolve) => {
              timer = setTimeout(resolve, graceMs);
            }),
          ]);
          clearTimeout(timer);
        }
        if (pending.size > 0) {
          deps.logger.warn({ requests: pending.size }, "websocket: cancelling running requests");
          turns.killAll();
        }
        await Promise.allSettled([...pending]);
        for (const client of wss.clients) client.close(1001, "server closing");
        // In noServer mode the callback runs once every tracked client has closed.
        await new Promise<void>((resolve) => wss.close(() => resolve()));
      })();
      return closing;
    },
  };
}

function textOf(data: RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString("utf8");
  return Buffer.isBuffer(data) ? data.toString("utf8") : Buffer.from(data).toString("utf8");
}

function refuse(socket: Duplex, status: number, reason: string, code?: string): void {
  const body = JSON.stringify({
    error: { code: code ?? (status === 401 ? "UNAUTHORIZED" : reason), message: reason },
  });
  socket.on("error", () => {
    // The client may already be gone; there is nobody left to tell.
  });
  socket.once("finish", () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\n` +
      "Connection: close\r\n" +
      "Content-Type: application/json\r\n" +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      (status === 401 ? 'WWW-Authenticate: Bearer realm="sessiond"\r\n' : "") +
      `\r\n${body}`,
  );
}

function headerOf(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
