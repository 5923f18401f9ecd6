import type { IdentityLinks } from "../keys/index.js";
import { forgetIdentity, reconcileIdentityLinks } from "../lifecycle/identity-changes.js";
import type { InLanes } from "../lifecycle/in-lanes.js";
import type { Store } from "../store/store.js";
import type { Engine } from "./api.js";

export interface IdentityParts {
  store: Store;
  dataDir: string;
  links: IdentityLinks;
  agents: readonly string[];
  inLanes: InLanes;
  /** After a key's sessions were deleted: its runtime sessions and share links go too. */
  afterDelete: (key: string) => Promise<void>;
}

/** `engine.identity`: identity links checked and applied, and a person forgotten key by key. */
export function engineIdentity(parts: IdentityParts): Engine["identity"] {
  const { store, dataDir, links, agents, inLanes, afterDelete } = parts;
  return {
    check: () => reconcileIdentityLinks(store, dataDir, links, agents),
    relink: () => reconcileIdentityLinks(store, dataDir, links, agents, { apply: true, inLanes }),
    forget: (identity) =>
      forgetIdentity(store, identity, links, agents, inLanes, async (key) => {
        const deleted = await store.delete(key);
        if (deleted.sessions > 0) await afterDelete(key);
        return deleted;
      }),
  };
}
