import { randomBytes } from "node:crypto";
import type { IdentityLinks, Route } from "../keys/index.js";
import type { CostLedger } from "../ledger/entry.js";
import { forgetLedgerKeys } from "../ledger/forget.js";
import type { Envelope } from "../model/envelope.js";
import { isSessiondError } from "../model/errors.js";
import { isScrubbable } from "../store/scrub.js";
import type { DeleteResult, Store } from "../store/store.js";
import { ErasureTombstones, TOMBSTONE_FILE } from "./erasure-tombstones.js";
import { erasedSenders, eraseGroupMessages, type GroupErasure } from "./group-erasure.js";
import { type ForgottenKey, forgetIdentity } from "./identity-changes.js";
import { direct, type InLanes } from "./in-lanes.js";

/** What `engine.forget({ subject })` erased, with counts (`sessiond forget --subject`, DELETE /api/subjects/{id}). */
export interface ErasureReceipt {
  /** The person of `session.identity_links` the subject named, or the subject itself when it is not linked. */
  subject: string;
  /** The linked accounts whose keys were erased. */
  accounts: string[];
  /** Each key erased, with its generations (current, archives, forks) and entries. */
  keys: ForgottenKey[];
  sessions: number;
  entries: number;
  /** Their messages in sessions of other keys (groups, channels, a shared DM session), now ERASED notes. */
  groups: GroupErasure;
  /** Cost ledger entries whose key became its keyed hash (their totals stay). */
  ledgerEntries: number;
  /** Inbox rows of those keys deleted (admitted inputs hold the envelope's text). */
  inboxRows: number;
  /** Words dropped from the search vocabulary (the search rows go with their sessions). */
  searchTerms: number;
  /** Keys whose runtime sessions, costs' session links and share links were deleted. */
  runtimeAndShareKeys: number;
  /**
   * How the freed bytes left the store's files ("fts5 optimize + VACUUM + wal_checkpoint(TRUNCATE)" on
   * SQLite), or "rows deleted" for a store that cannot rewrite its files (PostgreSQL: see the README's
   * VACUUM note).
   */
  scrub: string;
  erasedAt: string;
  /** The tombstone written (keyed hashes only): the file, and how many message ids it refuses. */
  tombstone: { file: string; messages: number } | undefined;
  /** What this erasure does not reach yet (docs/erasure.md "Not done yet"): said, never implied. */
  notErased: string[];
}

export interface SubjectErasureParts {
  store: Store;
  links: IdentityLinks;
  agents: readonly string[];
  inLanes?: InLanes;
  /** After a key's sessions were deleted: its runtime sessions and share links go too. */
  afterDelete?: (key: string) => Promise<void>;
  now?: () => number;
  /** Where the erasure is remembered, so a redelivered message does not bring it back. */
  tombstones?: ErasureTombstones;
  /** The cost ledger: its entries keep their totals, the erased keys become keyed hashes. */
  ledger?: CostLedger;
}

/**
 * Erases everything of one person (issue 34, docs/erasure.md): every key of each linked account (all
 * generations and archives, and the forks that hold their history by reference; forgetIdentity), the
 * runtime sessions and share links of those keys, their inbox rows, and then has the store rewrite its
 * files so no freed byte keeps their text. A subject that is neither a person of the links nor one of
 * their accounts is taken as one unlinked account.
 */
export async function forgetSubject(parts: SubjectErasureParts, subject: string): Promise<ErasureReceipt> {
  const { store, agents, inLanes = direct, afterDelete } = parts;
  let runtimeAndShareKeys = 0;
  const messageIds = new Set<string>();
  const deleteKey = async (key: string): Promise<DeleteResult> => {
    if (parts.tombstones) await collectMessageIds(store, key, messageIds);
    const deleted = await store.delete(key);
    if (deleted.sessions > 0 && afterDelete) {
      await afterDelete(key);
      runtimeAndShareKeys++;
    }
    return deleted;
  };
  let forgotten: Awaited<ReturnType<typeof forgetIdentity>>;
  try {
    forgotten = await forgetIdentity(store, subject, parts.links, agents, inLanes, deleteKey);
  } catch (error) {
    if (!isSessiondError(error, "INVALID_ARGUMENT") || subject.trim() === "") throw error;
    forgotten = await forgetIdentity(store, subject, { [subject]: [subject] }, agents, inLanes, deleteKey);
  }
  const senders = erasedSenders(forgotten.accounts);
  const groups = await eraseGroupMessages(store, senders, messageIds);
  const erasedKeys = forgotten.keys.map((k) => k.key);
  const erasedAt = new Date((parts.now ?? Date.now)()).toISOString();
  parts.tombstones?.record([...forgotten.accounts, ...erasedKeys], messageIds, erasedAt);
  const secret = parts.tombstones?.secret() ?? randomBytes(32).toString("hex");
  const ledgerEntries = parts.ledger ? await forgetLedgerKeys(parts.ledger, erasedKeys, secret) : 0;
  const scrub = isScrubbable(store) ? await store.scrub(erasedKeys, senders) : undefined;
  return {
    subject: forgotten.person,
    accounts: forgotten.accounts,
    keys: forgotten.keys,
    sessions: forgotten.sessions,
    entries: forgotten.entries,
    groups,
    ledgerEntries,
    inboxRows: scrub?.inboxRows ?? 0,
    searchTerms: scrub?.searchTerms ?? 0,
    runtimeAndShareKeys,
    scrub: scrub?.method ?? "rows deleted",
    erasedAt,
    tombstone: parts.tombstones ? { file: TOMBSTONE_FILE, messages: messageIds.size } : undefined,
    notErased: [],
  };
}

/** The platform message ids of a key's entries, every generation: what a redelivery would carry. */
async function collectMessageIds(store: Store, key: string, into: Set<string>): Promise<void> {
  for (const session of await store.generations(key)) {
    for (const entry of await store.readEntries(session.id)) {
      if (entry.type === "message" && entry.role === "user" && entry.idempotencyKey)
        into.add(entry.idempotencyKey);
    }
  }
}

/** Erasure by subject for one engine: `forget`, and `check` before a message is taken (redeliveries). */
export class SubjectErasure {
  private readonly tombstones: ErasureTombstones;

  constructor(
    private readonly parts: Omit<SubjectErasureParts, "tombstones">,
    dataDir: string,
  ) {
    this.tombstones = new ErasureTombstones(dataDir);
  }

  forget(subject: string): Promise<ErasureReceipt> {
    return forgetSubject({ ...this.parts, tombstones: this.tombstones }, subject);
  }

  /** Throws SUBJECT_ERASED for a redelivered message of an erased subject (erasure-tombstones.ts). */
  check(route: Route, envelope: Envelope): void {
    this.tombstones.check(route, envelope);
  }
}
