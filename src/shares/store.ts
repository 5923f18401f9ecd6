import type { ShareLink } from "./share.js";

/**
 * Where share links live: beside the session store, so every process on the same store sees the same
 * links. A revoked link is deleted: a revoked id and one never made read alike.
 */
export interface ShareStore {
  insert(link: ShareLink): Promise<void>;
  get(id: string): Promise<ShareLink | undefined>;
  /** A key's links, oldest first. */
  forKey(key: string): Promise<ShareLink[]>;
  /** Deletes the link; false when there was none. */
  delete(id: string): Promise<boolean>;
  /** Deletes every link of a key (the key was deleted). */
  deleteKey(key: string): Promise<void>;
  close(): Promise<void>;
}
