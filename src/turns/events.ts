import type { Clock } from "../lifecycle/clock.js";
import { reportsChanges, type Store, type StoreChange } from "../store/store.js";

/** What happened to sessions, for live views (WebSocket subscribers, the dashboard, metrics). */
export type SessionEvent =
  | StoreChange
  | { type: "turn.started"; key: string; agent: string }
  | { type: "turn.finished"; key: string; agent: string; ok: boolean; error?: string };

export type SessionEventListener = (event: SessionEvent) => void;

export interface ListenOptions {
  /**
   * Only what happens in this process (its turns, its store's writes): another process's appends are not
   * relayed for this listener (foreign-events.ts), so a process whose listeners are all local reads nothing
   * when another gateway on the same database writes. Metrics are per process: they want this.
   */
  localOnly?: boolean;
}

/** A listener that throws is dropped from nothing and breaks nothing: its error is swallowed per event. */
export class SessionEvents {
  /** Replaced, never changed in place: an emit goes over the listeners there were when it began. */
  private listeners: ReadonlyArray<{ listener: SessionEventListener; localOnly: boolean }> = [];

  on(listener: SessionEventListener, options: ListenOptions = {}): () => void {
    const entry = { listener, localOnly: options.localOnly === true };
    this.listeners = [...this.listeners, entry];
    let on = true;
    return () => {
      if (!on) return;
      on = false;
      const at = this.listeners.indexOf(entry);
      if (at >= 0) this.listeners = [...this.listeners.slice(0, at), ...this.listeners.slice(at + 1)];
    };
  }

  /** `foreign`: an event relayed from another process, for the listeners that are not local only. */
  emit(event: SessionEvent, foreign = false): void {
    for (const { listener, localOnly } of this.listeners) {
      if (foreign && localOnly) continue;
      try {
        listener(event);
      } catch {
        // One broken subscriber must not fail the write that caused the event.
      }
    }
  }

  get listenerCount(): number {
    return this.listeners.length;
  }

  /** The listeners that want other processes' appends too. */
  get foreignListenerCount(): number {
    return this.listeners.filter((l) => !l.localOnly).length;
  }
}

/**
 * Makes every change the store commits a session event, and dates entries given without a time by
 * `clock`. The store core reports its own changes; a store of the caller's that does not is wrapped, its
 * writes reported as they resolve. Returns the store to use and how to stop listening.
 */
export function observeStore(
  store: Store,
  events: SessionEvents,
  clock: Clock,
): { store: Store; stop(): void } {
  if (reportsChanges(store)) {
    store.dateEntriesBy(() => clock.now());
    return { store, stop: store.onChange((change) => events.emit(change)) };
  }
  return { store: observedStore(store, events, clock), stop: () => {} };
}

/** A store that does not report its changes, wrapped: its writes are reported as they resolve. */
function observedStore(store: Store, events: SessionEvents, clock: Clock): Store {
  const writes: Partial<Store> = {
    append: async (key, given, options) => {
      // Entries without a time of their own get the engine's clock's, so one clock dates everything.
      const entries = given.map((e) => (e.ts === undefined ? { ...e, ts: clock.now() } : e));
      const result = await store.append(key, entries, options);
      const fresh = result.entries.filter((_, i) => result.created[i]);
      if (fresh.length > 0) events.emit({ type: "appended", key, session: result.session, entries: fresh });
      return result;
    },
    reset: async (key, cause, init) => {
      const result = await store.reset(key, cause, init);
      events.emit({ type: "reset", key, cause, archived: result.archived, current: result.current });
      return result;
    },
    archive: async (key, cause) => {
      const result = await store.archive(key, cause);
      events.emit({ type: "reset", key, cause, archived: result.archived });
      return result;
    },
    updateSession: async (key, patch) => {
      const session = await store.updateSession(key, patch);
      events.emit({ type: "updated", key, session });
      return session;
    },
    delete: async (key) => {
      const result = await store.delete(key);
      if (result.sessions > 0) events.emit({ type: "deleted", key, sessions: result.sessions });
      return result;
    },
  };
  // Methods run on the store itself (never on the proxy), so a backend's own state stays its own.
  const bound = new Map<PropertyKey, { of: unknown; fn: unknown }>();
  return new Proxy(store, {
    get(target, name, receiver) {
      const write = writes[name as keyof Store];
      if (write) return write;
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== "function") return value;
      // Bound once per method, not on every call: every turn goes through here several times.
      const known = bound.get(name);
      if (known && known.of === value) return known.fn;
      const fn = value.bind(target);
      bound.set(name, { of: value, fn });
      return fn;
    },
  });
}
