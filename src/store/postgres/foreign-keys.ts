import type { ForeignChanges } from "../driver.js";

/** Past this many keys changed elsewhere between two asks, the core forgets everything instead. */
const MAX_KEYS = 10_000;

const ALL: ForeignChanges = { kind: "all" };
const NONE: ForeignChanges = { kind: "none" };

/**
 * What other processes changed, from their CHANGED_CHANNEL notices (append-notify.ts), for the core's
 * `foreignChanges()`. While the LISTEN connection is down nothing can be known: everything is changed,
 * at every ask, and once more after it is back (notices sent meanwhile are lost).
 */
export class ForeignKeys {
  private readonly keys = new Set<string>();
  private everything = true;

  constructor(private readonly self: string) {}

  /** A CHANGED_CHANNEL payload: the writer's id, then one JSON key a line. */
  noted(payload: string): void {
    const lines = payload.split("\n");
    if (lines[0] === this.self || this.everything) return;
    for (const line of lines.slice(1)) {
      try {
        this.keys.add(JSON.parse(line) as string);
      } catch {
        this.everything = true;
      }
    }
    if (this.keys.size > MAX_KEYS) this.everything = true;
  }

  /** Notices may have been missed. */
  lost(): void {
    this.everything = true;
  }

  take(listening: boolean): ForeignChanges {
    if (!listening || this.everything) {
      this.everything = !listening;
      this.keys.clear();
      return ALL;
    }
    if (this.keys.size === 0) return NONE;
    const keys = [...this.keys];
    this.keys.clear();
    return { kind: "keys", keys };
  }
}
