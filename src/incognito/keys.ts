import { SessiondError } from "../model/errors.js";
import type { Store } from "../store/store.js";
import type { IncognitoMatcher } from "./rules.js";

/** How much incognito data one process holds (`session.incognito_max_keys`, `session.incognito_max_bytes`). */
export interface IncognitoLimits {
  /** Keys made incognito (by a request, or by a rule on their first turn); default 10,000. */
  maxKeys: number;
  /** Bytes of their entries (as JSON) and keys; default 64 MiB. */
  maxBytes: number;
}

export const DEFAULT_INCOGNITO_LIMITS: IncognitoLimits = { maxKeys: 10_000, maxBytes: 64 * 1024 * 1024 };

/**
 * The keys whose sessions live in this process's memory only: those a request asked for (the first one;
 * `incognito: true`), and those a `session.incognito_for` rule matches. Nothing of it is written anywhere:
 * a restart forgets every one. Bounded in keys and bytes; past either, INCOGNITO_FULL.
 */
export class IncognitoKeys {
  private readonly marked = new Set<string>();
  private used = 0;

  constructor(
    /** The stored sessions: a key that has one there cannot become incognito. */
    private readonly persistent: Pick<Store, "generations">,
    private readonly matches: IncognitoMatcher,
    readonly limits: IncognitoLimits = DEFAULT_INCOGNITO_LIMITS,
  ) {}

  /** Whether the key's sessions live in memory only: asked for in this process, or a rule matches it. */
  has(key: string): boolean {
    return this.marked.has(key) || this.matches(key);
  }

  /** Keys made incognito so far (those a rule matches count once their first turn claimed them). */
  get size(): number {
    return this.marked.size;
  }

  /** Bytes held: the incognito entries' JSON and the keys. */
  get bytes(): number {
    return this.used;
  }

  /**
   * Before a turn on `key`: true when its session is (now) incognito, because `requested` asked for it, a
   * rule matches, or an earlier request made it so. A key with a stored session cannot become incognito
   * (KEY_TAKEN); a full set refuses a new key (INCOGNITO_FULL).
   */
  claim(key: string, requested: boolean): boolean | Promise<boolean> {
    // Answered at once when nothing is to be read: a turn is queued in the order its caller called.
    if (this.marked.has(key)) return true;
    const byRule = this.matches(key);
    if (!requested && !byRule) return false;
    return this.claimNew(key, byRule);
  }

  /** Makes `key` incognito without a turn (a fork of an incognito session); KEY_TAKEN as `claim`. */
  async adopt(key: string): Promise<void> {
    await this.claim(key, true);
  }

  private async claimNew(key: string, byRule: boolean): Promise<boolean> {
    this.roomForKey(key);
    await this.refuseStored(key, byRule);
    if (this.marked.has(key)) return true;
    this.roomForKey(key);
    this.marked.add(key);
    this.used += Buffer.byteLength(key);
    // A stored session begun between the read and the mark (a turn without the flag, at the same moment).
    try {
      await this.refuseStored(key, byRule);
    } catch (error) {
      this.forget(key);
      throw error;
    }
    return true;
  }

  /** The key's sessions were deleted: it is an ordinary key again (unless a rule matches it). */
  forget(key: string): void {
    if (this.marked.delete(key)) this.used -= Buffer.byteLength(key);
  }

  /** Takes `bytes` of the budget for entries about to be stored in memory; INCOGNITO_FULL past it. */
  charge(bytes: number): void {
    if (this.used + bytes > this.limits.maxBytes) {
      throw new SessiondError(
        "INCOGNITO_FULL",
        `incognito sessions hold ${this.used} bytes in memory, and ${bytes} more would pass ` +
          `session.incognito_max_bytes (${this.limits.maxBytes}): delete one (it is gone for good) or raise the limit`,
        { details: { used: this.used, limit: this.limits.maxBytes } },
      );
    }
    this.used += bytes;
  }

  /** Gives back what deleted entries took. */
  refund(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
  }

  private roomForKey(key: string): void {
    if (this.marked.size >= this.limits.maxKeys) {
      throw new SessiondError(
        "INCOGNITO_FULL",
        `${this.marked.size} incognito sessions are open, the most session.incognito_max_keys allows: ` +
          "delete one (it is gone for good) or raise the limit",
        { details: { keys: this.marked.size, limit: this.limits.maxKeys } },
      );
    }
    const bytes = Buffer.byteLength(key);
    // Throws when the key itself does not fit; gives back what it took when it does (taken on the mark).
    this.charge(bytes);
    this.refund(bytes);
  }

  private async refuseStored(key: string, byRule: boolean): Promise<void> {
    if ((await this.persistent.generations(key)).length === 0) return;
    const why = byRule ? "matches session.incognito_for but " : "";
    throw new SessiondError(
      "KEY_TAKEN",
      `session ${JSON.stringify(key)} ${why}has a stored session, so it cannot be incognito: ` +
        "use another session name, or delete the stored one first",
      { details: { key } },
    );
  }
}
