/** The AbortControllers of running (and queued) `chat.send` turns, per session key. */
export class RunningTurns {
  private readonly byKey = new Map<string, Set<AbortController>>();

  /** Registers a turn on `key`; call the returned function when it ends, however it ends. */
  start(key: string): { signal: AbortSignal; done: () => void } {
    const controller = new AbortController();
    let set = this.byKey.get(key);
    if (!set) {
      set = new Set();
      this.byKey.set(key, set);
    }
    set.add(controller);
    return {
      signal: controller.signal,
      done: () => {
        const current = this.byKey.get(key);
        current?.delete(controller);
        if (current?.size === 0) this.byKey.delete(key);
      },
    };
  }

  /** Aborts every turn of `key` and forgets them; true when there was one. */
  kill(key: string): boolean {
    const set = this.byKey.get(key);
    if (!set) return false;
    this.byKey.delete(key);
    for (const controller of set) controller.abort();
    return set.size > 0;
  }

  killAll(): void {
    for (const key of [...this.byKey.keys()]) this.kill(key);
  }
}
