import type { StoreDriver } from "../driver.js";
import { checkStoreKey as checkKeys, DataKeys, type KeyedSession } from "./data-keys.js";
import { derivedKey } from "./envelope.js";
import { SealingDriver, type UnreadableEntry } from "./sealing-driver.js";

/** `store.encryption` as a store takes it: the configured key itself (config/ reads it from `key_env`). */
export interface StoreEncryption {
  /** 32 bytes: the key that wraps every session's data key. */
  key: Buffer;
  /** The most bytes of unwrapped data keys kept in memory (default 1 MiB, about 5,000 sessions). */
  keyCacheBytes?: number;
  /** A sealed entry that does not open, reported once per session (default: a process warning). */
  onUnreadable?: (problem: UnreadableEntry) => void;
}

/** The check `storeDriver` makes, for a driver that makes it while it opens (before it rewrites anything). */
export function checkStoreKey(
  where: string,
  encryption: StoreEncryption | undefined,
  sample: KeyedSession | undefined,
): void {
  checkKeys(where, encryption && new DataKeys(encryption.key, encryption.keyCacheBytes), sample);
}

/**
 * The driver a store runs on: `inner` itself in clear, or sealed. `sample` is one session of the store
 * that has a data key (if any): a sealed store opened without its key, or with another, is refused here
 * (STORE_CORRUPT), before anything is read or written.
 */
export function storeDriver(
  where: string,
  inner: StoreDriver,
  encryption: StoreEncryption | undefined,
  sample: KeyedSession | undefined,
): StoreDriver {
  const keys = encryption && new DataKeys(encryption.key, encryption.keyCacheBytes);
  checkKeys(where, keys, sample);
  if (!encryption || !keys) return inner;
  return new SealingDriver(inner, {
    keys,
    inboxKey: derivedKey(encryption.key, "inbox"),
    ...(encryption.onUnreadable ? { onUnreadable: encryption.onUnreadable } : {}),
  });
}
