import { LRUCache } from "lru-cache";
import { SessiondError } from "../../model/errors.js";
import type { Session } from "../../model/session.js";
import { KEY_BYTES, newDataKey, open, seal } from "./envelope.js";

/** A session's data key, and its wrapped form as its row holds it. */
export interface SessionKey {
  key: Buffer;
  wrapped: string;
}

/** A session as a driver stores it under encryption: its data key, wrapped by the configured key. */
export type KeyedSession = Session & { dataKey?: string };

/** The configured key (key-encryption key) and the unwrapped data keys of sessions recently used. */
export class DataKeys {
  /** Unwrapped keys (and their wrapped form) by session id, bounded by bytes (roughly, V8's overhead counted). */
  private readonly keys: LRUCache<string, SessionKey>;

  constructor(
    private readonly kek: Buffer,
    maxBytes = 1024 * 1024,
  ) {
    if (kek.length !== KEY_BYTES) throw new RangeError(`the store key must be ${KEY_BYTES} bytes`);
    this.keys = new LRUCache<string, SessionKey>({
      maxSize: maxBytes,
      sizeCalculation: (k, id) => KEY_BYTES + k.wrapped.length + 2 * id.length + 160,
    });
  }

  /** A new data key for `sessionId`, remembered; the wrapped form goes in the session's row. */
  create(sessionId: string): SessionKey {
    const key = newDataKey();
    const created = { key, wrapped: seal(this.kek, key, `dek/${sessionId}`) };
    this.keys.set(sessionId, created);
    return created;
  }

  /** The cached key of a session, if held. */
  cached(sessionId: string): SessionKey | undefined {
    return this.keys.get(sessionId);
  }

  /**
   * The session's key from its row's wrapped form (cached), or undefined when the row has none (a session
   * stored before encryption was on, or one whose key was destroyed) or it does not open (damaged).
   */
  fromRow(session: KeyedSession): SessionKey | undefined {
    const held = this.keys.get(session.id);
    if (held) return held;
    if (session.dataKey === undefined) return undefined;
    const key = open(this.kek, session.dataKey, `dek/${session.id}`);
    if (key?.length !== KEY_BYTES) return undefined;
    const found = { key, wrapped: session.dataKey };
    this.keys.set(session.id, found);
    return found;
  }

  /** Whether `wrapped` opens with the configured key: the check a store makes when it opens. */
  opens(sessionId: string, wrapped: string): boolean {
    return open(this.kek, wrapped, `dek/${sessionId}`)?.length === KEY_BYTES;
  }

  forget(sessionId: string): void {
    this.keys.delete(sessionId);
  }
}

/**
 * What a store checks when it opens, given one session of it that has a wrapped data key (if any): a sealed
 * store opened without the key, or with another one, is refused before anything is read or rewritten.
 */
export function checkStoreKey(
  where: string,
  keys: DataKeys | undefined,
  sample: KeyedSession | undefined,
): void {
  if (!sample?.dataKey) return;
  if (!keys)
    throw new SessiondError(
      "STORE_CORRUPT",
      `${where}: the store is sealed (store.encryption was on when it was written): configure store.encryption.key_env with its key`,
      { details: { sealed: true } },
    );
  if (!keys.opens(sample.id, sample.dataKey))
    throw new SessiondError(
      "STORE_CORRUPT",
      `${where}: the store is sealed with another key than the one configured (store.encryption.key_env): nothing was read or rewritten`,
      { details: { sealed: true } },
    );
}
