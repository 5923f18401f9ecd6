import type { Clock } from "../lifecycle/clock.js";
import type { Entry, ResetCause } from "../model/entry.js";
import type { Session } from "../model/session.js";
import type { Store } from "../store/store.js";

/** What happened to sessions, for live views (WebSocket subscribers, the dashboard, metrics). */
export type SessionEvent =
  | { type: "appended"; key: string; session: Session; entries: Entry[] }
  | { type: "reset"; key: string; cause: ResetCause; archived: Session; current?: Session }
  | { type: "updated"; key: string; session: Session }
  | { type: "deleted"; key: string; sessions: number }
  | { type: "turn.started"; key: string; agent: string }
  | { type: "turn.finished"; key: string; agent: string; ok: boolean; error?: string };

export type SessionEventListener = (event: SessionEvent) => void;

/** A listener that throws is dropped from nothing and breaks nothing: its error is swallowed per event. */
export class SessionEvents {
  /** Replaced, never changed in place: an emit goes over the listeners there were when it began. */
  private listeners: readonly SessionEventListener[] = [];

  on(listener: SessionEventListener): () => void {
    this.listeners = [...this.listeners, listener];
    let on = true;
    return () => {
      if (!on) return;
      on = false;
      const at = this.listeners.indexOf(listener);
      if (at >= 0) this.listeners = [...this.listeners.slice(0, at), ...this.listeners.slice(at + 1)];
    };
  }

  emit(event: SessionEvent): void {
    for (const listener of this.listeners) {
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
}

/** The store, reporting every change it commits as a session event. Everything else passes straight through. */
export function observedStore(store: Store, events: SessionEvents, clock?: Clock): Store {
  const writes: Partial<Store> = {
    append: async (key, given, options) => {
      // Entries without a time of their own get the engine's clock's, so one clock dates everything.
      const entries = clock ? given.map((e) => (e.ts === undefined ? { ...e, ts: clock.now() } : e)) : given;
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
