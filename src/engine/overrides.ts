import { validateKey } from "../keys/index.js";
import { resolveSettings } from "../lifecycle/overrides.js";
import type { OverrideValue } from "../model/session.js";
import { sessionNotFound } from "../store/session-log.js";
import type { Store } from "../store/store.js";
import type { Engine, OverrideChange } from "./api.js";
import type { SessionSettings } from "./session-settings.js";

export type SessionOverrides = Engine["overrides"] & {
  /** Applies `changes` (null unsets) to the key's session, in its lane. */
  change(key: string, changes: Array<[string, OverrideValue | null]>): Promise<OverrideChange[]>;
};

/** `engine.overrides`: a session's own settings over its agent's, changed in the key's lane. */
export function sessionOverrides(
  store: Store,
  settings: SessionSettings,
  inLane: <T>(key: string, work: () => Promise<T>) => Promise<T>,
): SessionOverrides {
  const change = (key: string, changes: Array<[string, OverrideValue | null]>) => {
    validateKey(key);
    return inLane(key, async () => {
      const session = await store.getSession(key);
      if (!session) throw sessionNotFound(key);
      const planned = settings.plan(session, changes);
      await store.updateSession(key, { overrides: planned.patch });
      return planned.changes;
    });
  };
  return {
    change,
    set: (key, values) => change(key, Object.entries(values)),
    unset: (key, names) =>
      change(
        key,
        names.map((name) => [name, null]),
      ),
    resolve: async (key) => {
      const session = await store.getSession(validateKey(key));
      if (!session) throw sessionNotFound(key);
      return resolveSettings({ session: session.overrides, ...settings.inherited(session.agent) });
    },
  };
}
