import { incognitoRefusal } from "../incognito/errors.js";
import { validateKey } from "../keys/index.js";
import { SessiondError } from "../model/errors.js";
import { redactSecrets } from "../secrets/index.js";
import { sessionNotFound } from "../store/session-log.js";
import type { Store } from "../store/store.js";
import { isShareId, newShareId, type SharedConversation, type ShareLink } from "./share.js";
import type { ShareStore } from "./store.js";
import { sharedConversation } from "./view.js";

/** Links one key may have at once: each is a row, and a client must not grow the table without bound. */
export const MAX_SHARES_PER_KEY = 100;

/** `engine.shares`: read-only links to one conversation, as it was when shared. */
export interface Shares {
  /** Makes a link to the key's current session, pinned at its last seq. */
  create(key: string): Promise<ShareLink>;
  /** The link, or undefined for a revoked, unknown or malformed id (alike). */
  get(id: string): Promise<ShareLink | undefined>;
  /** What the link shows, redacted; undefined as `get`, or when the session was deleted since. */
  view(id: string): Promise<SharedConversation | undefined>;
  /** The key's links, oldest first. */
  list(key: string): Promise<ShareLink[]>;
  /** Revokes the link everywhere at once; false when there was none. */
  revoke(id: string): Promise<boolean>;
}

export interface SharesOptions {
  now: () => number;
  /**
   * Keys that may not be shared: incognito sessions (kept in memory only) answer SESSION_INCOGNITO. The
   * engine passes its incognito routing here.
   */
  unshareable?: (key: string) => boolean;
}

export class EngineShares implements Shares {
  constructor(
    private readonly links: ShareStore,
    private readonly store: Store,
    private readonly options: SharesOptions,
  ) {}

  async create(key: string): Promise<ShareLink> {
    validateKey(key);
    if (this.options.unshareable?.(key)) throw incognitoRefusal(key, "shared");
    const session = await this.store.getSession(key);
    if (!session) throw sessionNotFound(key);
    if ((await this.links.forKey(key)).length >= MAX_SHARES_PER_KEY) {
      throw new SessiondError(
        "INVALID_ARGUMENT",
        `a session may have at most ${MAX_SHARES_PER_KEY} share links; revoke one first`,
      );
    }
    const link: ShareLink = {
      id: newShareId(),
      key,
      sessionId: session.id,
      headSeq: session.entryCount,
      title: redactSecrets(session.title),
      createdAt: this.options.now(),
    };
    await this.links.insert(link);
    return link;
  }

  async get(id: string): Promise<ShareLink | undefined> {
    return isShareId(id) ? this.links.get(id) : undefined;
  }

  async view(id: string): Promise<SharedConversation | undefined> {
    const link = await this.get(id);
    return link && sharedConversation(this.store, link);
  }

  list(key: string): Promise<ShareLink[]> {
    validateKey(key);
    return this.links.forKey(key);
  }

  async revoke(id: string): Promise<boolean> {
    return isShareId(id) ? this.links.delete(id) : false;
  }

  /** Forgets a deleted key's links (they show nothing already: their session is gone). */
  forget(key: string): Promise<void> {
    return this.links.deleteKey(key);
  }

  close(): Promise<void> {
    return this.links.close();
  }
}
