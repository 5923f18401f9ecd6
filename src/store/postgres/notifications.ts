import type { Notification, Pool, PoolClient } from "pg";
import { connect, release } from "./pool.js";

type Listener = (payload: string) => void;

/** The longest pause between attempts to get the LISTEN connection back. */
const MAX_BACKOFF_MS = 2000;

/**
 * One LISTEN connection per store, opened on first use, for every channel the store listens on. If the
 * connection breaks (the server restarted), it is opened again with a doubling backoff, and `onReconnect`
 * listeners run: notifications sent meanwhile are lost, so they re-read what they wait for.
 */
export class PgNotifications {
  private client: PoolClient | undefined;
  private connecting: Promise<void> | undefined;
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly reconnected = new Set<() => void>();
  private closed = false;
  private backoff = 50;
  private retry: NodeJS.Timeout | undefined;

  constructor(private readonly pool: Pool) {}

  /**
   * Calls `listener` with each payload sent on `channel` (an identifier, never user data) from now on;
   * returns how to stop. Rejects when the server cannot be reached (it keeps trying in the background).
   */
  async listen(channel: string, listener: Listener): Promise<() => void> {
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
    }
    const isNew = set.size === 0;
    set.add(listener);
    const stop = () => {
      set.delete(listener);
    };
    if (this.client && isNew) await this.client.query(`LISTEN ${channel}`);
    else await this.ensure();
    return stop;
  }

  /** Whether the LISTEN connection is up (notifications can be missed while it is not). */
  get connected(): boolean {
    return this.client !== undefined;
  }

  /** Calls `listener` after each reconnect (notifications may have been missed). */
  onReconnect(listener: () => void): () => void {
    this.reconnected.add(listener);
    return () => this.reconnected.delete(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    await this.connecting?.catch(() => {});
    const client = this.client;
    this.client = undefined;
    if (client) release(client, true);
  }

  private ensure(): Promise<void> {
    if (this.client || this.closed) return Promise.resolve();
    this.connecting ??= this.open()
      .catch((error: unknown) => {
        this.reopen();
        throw error;
      })
      .finally(() => {
        this.connecting = undefined;
      });
    return this.connecting;
  }

  private async open(): Promise<void> {
    const client = await connect(this.pool);
    try {
      for (const channel of this.listeners.keys()) await client.query(`LISTEN ${channel}`);
    } catch (error) {
      release(client, error);
      throw error;
    }
    if (this.closed) {
      release(client, true);
      return;
    }
    this.client = client;
    client.on("notification", (message: Notification) => {
      for (const listener of this.listeners.get(message.channel) ?? []) listener(message.payload ?? "");
    });
    client.once("error", () => this.lost(client));
    client.once("end", () => this.lost(client));
  }

  private lost(client: PoolClient): void {
    if (this.client !== client) return;
    this.client = undefined;
    release(client, true);
    this.reopen();
  }

  private reopen(): void {
    if (this.closed || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.backoff = Math.min(this.backoff * 2, MAX_BACKOFF_MS);
      // A failure schedules the next attempt (in ensure).
      this.ensure().then(
        () => {
          this.backoff = 50;
          for (const listener of this.reconnected) listener();
        },
        () => {},
      );
    }, this.backoff);
    this.retry.unref();
  }
}
