import { useEffect, useState } from "preact/hooks";
import { readToken } from "./token";

type EventHandler = (data: unknown) => void;
export type LiveStatus = "connecting" | "open" | "closed";

interface Pending {
  resolve(result: unknown): void;
  reject(error: Error): void;
}

/**
 * The dashboard's one WebSocket (`/ws?channel=web`): requests answered by id, events by name. It
 * reconnects with backoff and re-runs every `onOpen` hook (watch, subscribe) on each new connection.
 */
class Live {
  private socket: WebSocket | undefined;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly handlers = new Map<string, Set<EventHandler>>();
  private readonly openHooks = new Set<() => void>();
  private readonly statusListeners = new Set<(status: LiveStatus) => void>();
  private retry = 0;
  private timer: number | undefined;
  status: LiveStatus = "closed";

  connect(): void {
    const token = readToken();
    if (!token || this.socket) return;
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    const query = new URLSearchParams({ token, channel: "web", peer: "dashboard" });
    const socket = new WebSocket(`${scheme}://${location.host}/ws?${query}`);
    this.socket = socket;
    this.setStatus("connecting");
    socket.onopen = () => {
      this.retry = 0;
      this.setStatus("open");
      for (const hook of this.openHooks) hook();
    };
    socket.onmessage = (message) => this.receive(String(message.data));
    socket.onclose = () => {
      if (this.socket !== socket) return;
      this.socket = undefined;
      for (const pending of this.pending.values()) pending.reject(new Error("connection closed"));
      this.pending.clear();
      this.setStatus("closed");
      if (!readToken()) return;
      const delay = Math.min(10_000, 500 * 2 ** this.retry++);
      this.timer = window.setTimeout(() => this.connect(), delay);
    };
  }

  disconnect(): void {
    window.clearTimeout(this.timer);
    const socket = this.socket;
    this.socket = undefined;
    socket?.close();
    this.setStatus("closed");
  }

  call<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const socket = this.socket;
    if (!socket || socket.readyState !== WebSocket.OPEN) {
      return Promise.reject(new Error("not connected to the gateway"));
    }
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (result: unknown) => void, reject });
      socket.send(JSON.stringify({ type: "req", id, method, params }));
    });
  }

  on(event: string, handler: EventHandler): () => void {
    let set = this.handlers.get(event);
    if (!set) {
      set = new Set();
      this.handlers.set(event, set);
    }
    set.add(handler);
    return () => set.delete(handler);
  }

  /** Runs `hook` now if connected, and again after every reconnect. */
  onOpen(hook: () => void): () => void {
    this.openHooks.add(hook);
    if (this.status === "open") hook();
    return () => this.openHooks.delete(hook);
  }

  onStatus(listener: (status: LiveStatus) => void): () => void {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }

  private setStatus(status: LiveStatus): void {
    this.status = status;
    for (const listener of this.statusListeners) listener(status);
  }

  private receive(text: string): void {
    let frame: { type?: string; id?: number; ok?: boolean; result?: unknown; error?: { message?: string } };
    let data: unknown;
    try {
      frame = JSON.parse(text) as typeof frame;
      data = (frame as { data?: unknown }).data;
    } catch {
      return;
    }
    if (frame.type === "res" && typeof frame.id === "number") {
      const pending = this.pending.get(frame.id);
      this.pending.delete(frame.id);
      if (frame.ok) pending?.resolve(frame.result);
      else pending?.reject(new Error(frame.error?.message ?? "request failed"));
    } else if (frame.type === "event") {
      const name = (frame as { event?: string }).event ?? "";
      for (const handler of this.handlers.get(name) ?? []) handler(data);
    }
  }
}

export const live = new Live();

export function useLiveStatus(): LiveStatus {
  const [status, setStatus] = useState(live.status);
  useEffect(() => {
    // The socket may have opened between the first render and this effect: a change then had no listener.
    setStatus(live.status);
    return live.onStatus(setStatus);
  }, []);
  return status;
}
