import { WebSocket } from "ws";
import type { GatewayLogger } from "../deps.js";

/** What one client may hold of the gateway: requests running, bytes waiting to be sent, connections. */
export interface WebSocketLimits {
  /** Requests running at once on one connection; past it a request is answered TOO_MANY_REQUESTS. Default 64 (a queued
   * `chat.send` counts; one key queues up to 20). */
  maxInFlight?: number;
  /** Open connections with the gateway's token; past it an upgrade is answered 429. Default 256. */
  maxConnections?: number;
  /** Bytes waiting to be sent past which the connection stops reading requests; default 1 MiB. */
  sendHighWaterBytes?: number;
  /** Bytes waiting to be sent past which the connection is closed (CLOSE_NOT_READING); default 16 MiB. */
  sendMaxBytes?: number;
  /** How long a connection may stay paused (its client not reading) before it is closed; default 30 s. */
  stallMs?: number;
}

export const WS_LIMIT_DEFAULTS: Required<WebSocketLimits> = {
  maxInFlight: 64,
  maxConnections: 256,
  sendHighWaterBytes: 1024 * 1024,
  sendMaxBytes: 16 * 1024 * 1024,
  stallMs: 30_000,
};

/** The close code of a connection whose client stopped reading its replies (1008: policy violation). */
export const CLOSE_NOT_READING = 1008;
const TERMINATE_AFTER_MS = 5000;
export const CLOSE_NOT_READING_REASON = "send buffer full: the client does not read its replies";

/**
 * Sends frames with backpressure: once more than the high-water mark waits to be written, the connection stops
 * reading (no new requests are parsed or run) until the client has read most of it; a client that stays
 * behind for `stallMs`, or lets `sendMaxBytes` pile up, is closed with CLOSE_NOT_READING and dropped.
 */
export class GuardedSender {
  private paused = false;
  private closed = false;
  private stall: NodeJS.Timeout | undefined;

  constructor(
    private readonly ws: WebSocket,
    private readonly limits: Required<WebSocketLimits>,
    private readonly logger: GatewayLogger,
    private readonly connection: string,
  ) {}

  send(text: string): void {
    if (this.closed || this.ws.readyState !== WebSocket.OPEN) return;
    if (this.ws.bufferedAmount + Buffer.byteLength(text) > this.limits.sendMaxBytes) {
      this.close();
      return;
    }
    this.ws.send(text, () => this.drained());
    if (!this.paused && this.ws.bufferedAmount > this.limits.sendHighWaterBytes) {
      this.paused = true;
      this.ws.pause();
      this.stall = setTimeout(() => this.close(), this.limits.stallMs);
      this.stall.unref();
    }
  }

  /** Forgets the timer once the connection is gone. */
  dispose(): void {
    this.closed = true;
    clearTimeout(this.stall);
  }

  private drained(): void {
    if (!this.paused || this.closed) return;
    if (this.ws.bufferedAmount > this.limits.sendHighWaterBytes / 2) return;
    this.paused = false;
    clearTimeout(this.stall);
    this.ws.resume();
  }

  private close(): void {
    if (this.closed) return;
    const buffered = this.ws.bufferedAmount;
    this.dispose();
    this.logger.warn(
      { connection: this.connection, bufferedBytes: buffered },
      `websocket: ${CLOSE_NOT_READING_REASON}`,
    );
    this.ws.close(CLOSE_NOT_READING, CLOSE_NOT_READING_REASON);
    // The close frame waits behind what the client does not read: a client that reads it within a few
    // seconds learns why; otherwise the socket and its buffer are dropped.
    setTimeout(() => this.ws.terminate(), TERMINATE_AFTER_MS).unref();
  }
}
