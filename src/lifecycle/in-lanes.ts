/**
 * Runs `work` holding the lanes of `keys`, so that a mutation of a key (reset, relink, forget, retention)
 * never runs beside a turn on it; `Lanes.runAll` in turns/ is one. `direct` holds none: for callers
 * without lanes.
 */
export type InLanes = <T>(keys: readonly string[], work: () => Promise<T>) => Promise<T>;

export const direct: InLanes = (_keys, work) => work();
