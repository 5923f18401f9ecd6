import { randomBytes } from "node:crypto";
import { open, readFile, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { makeDirSync } from "../fs/make-dir.js";
import { compileIdentityLinks } from "../keys/identity.js";
import type { IdentityLinks, KeyMerge } from "../keys/index.js";
import { identityLinkMerges } from "../keys/index.js";
import { isSessiondError, SessiondError } from "../model/errors.js";
import type { DeleteResult, Store } from "../store/store.js";
import { direct, type InLanes } from "./in-lanes.js";

/** The file in the data dir that holds the identity links last applied to the store. */
export const LINK_SNAPSHOT_FILE = "identity-links.json";

export interface IdentityLinkState {
  version: 1;
  /** `session.identity_links` as they were when the store last matched them. */
  links: Record<string, string[]>;
  /** ISO time of the write, for people reading the file. */
  savedAt: string;
}

export function linkSnapshotPath(dataDir: string): string {
  return join(dataDir, LINK_SNAPSHOT_FILE);
}

function corrupt(path: string, problem: string, cause?: unknown): SessiondError {
  return new SessiondError(
    "STORE_CORRUPT",
    `${path} is unreadable (${problem}). It only records the identity links last applied: delete it and ` +
      "restart, and every existing key of a linked account is reported as pending (sessiond sessions relink)",
    { details: { path }, cause },
  );
}

/**
 * The links last applied, or undefined when no snapshot was ever written. A file that does not parse or
 * does not hold a valid link table throws STORE_CORRUPT: writes are atomic, so such a file was damaged
 * from outside, and guessing would hide it.
 */
export async function readLinkSnapshot(dataDir: string): Promise<IdentityLinkState | undefined> {
  const path = linkSnapshotPath(dataDir);
  let raw: string;
  try {
    raw = await readFile(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new SessiondError("STORE_UNAVAILABLE", `cannot read ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw corrupt(path, "not JSON", error);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw corrupt(path, "not an object");
  const state = parsed as Partial<Record<keyof IdentityLinkState, unknown>>;
  if (state.version !== 1) throw corrupt(path, `unknown version ${JSON.stringify(state.version)}`);
  const links = state.links;
  if (
    typeof links !== "object" ||
    links === null ||
    Array.isArray(links) ||
    !Object.values(links).every(
      (accounts) => Array.isArray(accounts) && accounts.every((a) => typeof a === "string"),
    )
  ) {
    throw corrupt(path, "links is not a table of person → accounts");
  }
  try {
    compileIdentityLinks(links as IdentityLinks);
  } catch (error) {
    if (isSessiondError(error, "INVALID_ARGUMENT")) throw corrupt(path, error.message, error);
    throw error;
  }
  return {
    version: 1,
    links: links as Record<string, string[]>,
    savedAt: typeof state.savedAt === "string" ? state.savedAt : "",
  };
}

/**
 * Records `links` as applied: a temp file in the same dir, fsync, rename over the snapshot, fsync the dir.
 * A crash leaves either the old snapshot or the new one, never a torn file; a failed write removes its
 * temp file.
 */
export async function writeLinkSnapshot(
  dataDir: string,
  links: IdentityLinks,
  now: number = Date.now(),
): Promise<IdentityLinkState> {
  compileIdentityLinks(links);
  const state: IdentityLinkState = {
    version: 1,
    links: Object.fromEntries(Object.entries(links).map(([person, accounts]) => [person, [...accounts]])),
    savedAt: new Date(now).toISOString(),
  };
  const path = linkSnapshotPath(dataDir);
  const temp = join(dataDir, `.${LINK_SNAPSHOT_FILE}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    makeDirSync(dataDir);
    const file = await open(temp, "wx", 0o600);
    try {
      await file.writeFile(`${JSON.stringify(state, null, 2)}\n`, "utf8");
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => undefined);
    throw new SessiondError("STORE_UNAVAILABLE", `cannot write ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  await syncDir(dataDir);
  return state;
}

async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } catch (error) {
    // Some platforms and file systems refuse fsync on a directory; the rename itself is still atomic.
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "EINVAL" && code !== "EPERM" && code !== "EISDIR") throw error;
  } finally {
    await handle.close();
  }
}

/**
 * Every key in the store, archived-only keys included, each once. Pages through all sessions of all
 * generations: O(sessions) reads. Fine for a start-up check and an operator command; a store-side
 * `listKeys` would make it O(keys) if stores grow large.
 */
export async function storedKeys(store: Store): Promise<string[]> {
  const keys = new Set<string>();
  let cursor: string | undefined;
  do {
    const page = await store.listSessions({
      includeArchived: true,
      limit: 1000,
      ...(cursor === undefined ? {} : { cursor }),
    });
    for (const session of page.sessions) keys.add(session.key);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return [...keys];
}

/**
 * Keys in the store that the change from `oldLinks` to `newLinks` would orphan, each with the key its
 * history should move to. With no snapshot yet, pass `{}` as `oldLinks`: every existing key of a linked
 * account that is not its person's first account is then reported, and such a key is orphaned under the
 * new links whatever the old ones were.
 */
export async function pendingMerges(
  store: Store,
  oldLinks: IdentityLinks,
  newLinks: IdentityLinks,
  agents: readonly string[] = [],
): Promise<KeyMerge[]> {
  return identityLinkMerges(await storedKeys(store), oldLinks, newLinks, agents);
}

export interface AppliedMerge extends KeyMerge {
  /** Generations carried over from `from` to `to`. */
  moved: number;
}

/**
 * Carries each merge's history over with `store.rekey(from, to)`: every generation of both keys stays
 * readable under `to`; if both have a current session, the one of `from` is archived (cause `relink`).
 * Merges run one after another; after a failure the ones done stay done, and running `pendingMerges`
 * again finds only the rest. Run it while no turn is running on these keys (at start-up, or holding
 * their lanes).
 */
export async function applyMerges(
  store: Store,
  merges: readonly KeyMerge[],
  inLanes: InLanes = direct,
): Promise<{ merges: AppliedMerge[]; moved: number }> {
  const applied: AppliedMerge[] = [];
  let moved = 0;
  for (const merge of merges) {
    const result = await inLanes([merge.from, merge.to], () => store.rekey(merge.from, merge.to));
    applied.push({ from: merge.from, to: merge.to, moved: result.moved });
    moved += result.moved;
  }
  return { merges: applied, moved };
}

export interface IdentityLinkCheck {
  /** The links the store last matched: the snapshot's, or `{}` when there is none. */
  previous: IdentityLinks;
  /** False when no snapshot existed. */
  hadSnapshot: boolean;
  /** Keys the current links orphan; after `apply`, the ones that were moved. */
  merges: KeyMerge[];
  /** Set when `apply` was asked. */
  applied?: { merges: AppliedMerge[]; moved: number };
  /** Whether the snapshot now holds `links`: true when nothing is pending (any more). */
  snapshotWritten: boolean;
}

/**
 * The start-up check and `sessiond sessions relink [--apply]` in one: compares `links` with the snapshot,
 * finds the keys they orphan and, with `apply`, carries them over. The snapshot is updated to `links` only
 * once nothing is left pending, so unapplied merges are reported again at every start.
 */
export async function reconcileIdentityLinks(
  store: Store,
  dataDir: string,
  links: IdentityLinks,
  agents: readonly string[] = [],
  options: { apply?: boolean; now?: number; inLanes?: InLanes } = {},
): Promise<IdentityLinkCheck> {
  const snapshot = await readLinkSnapshot(dataDir);
  const previous = snapshot?.links ?? {};
  // Unchanged links (or none, ever) orphan nothing: no need to read every key.
  const unchanged = snapshot ? sameLinks(snapshot.links, links) : Object.keys(links).length === 0;
  // No snapshot stands for `{}`, so nothing is written then (a read-only command creates no files).
  if (unchanged)
    return {
      previous,
      hadSnapshot: snapshot !== undefined,
      merges: [],
      snapshotWritten: snapshot !== undefined,
    };
  const merges = await pendingMerges(store, previous, links, agents);
  const check: IdentityLinkCheck = {
    previous,
    hadSnapshot: snapshot !== undefined,
    merges,
    snapshotWritten: false,
  };
  if (merges.length > 0 && !options.apply) return check;
  if (merges.length > 0) check.applied = await applyMerges(store, merges, options.inLanes);
  if (snapshot === undefined || !sameLinks(snapshot.links, links)) {
    await writeLinkSnapshot(dataDir, links, options.now);
  }
  check.snapshotWritten = true;
  return check;
}

function sameLinks(a: IdentityLinks, b: IdentityLinks): boolean {
  const aKeys = Object.keys(a);
  if (aKeys.length !== Object.keys(b).length) return false;
  return aKeys.every((person) => {
    const x = a[person];
    const y = b[person];
    return x !== undefined && y !== undefined && x.length === y.length && x.every((v, i) => v === y[i]);
  });
}

export interface ForgottenKey {
  key: string;
  sessions: number;
  entries: number;
}

export interface ForgetResult {
  /** The person in `links` the identity named. */
  person: string;
  accounts: string[];
  /** The keys deleted (keys that had nothing are left out). */
  keys: ForgottenKey[];
  sessions: number;
  entries: number;
}

function personOf(identity: string, links: IdentityLinks): string {
  if (Object.hasOwn(links, identity)) return identity;
  const lower = identity.trim().toLowerCase();
  for (const [person, accounts] of Object.entries(links)) {
    if (person.toLowerCase() === lower || accounts.some((a) => a.toLowerCase() === lower)) return person;
  }
  const people = Object.keys(links);
  throw new SessiondError(
    "INVALID_ARGUMENT",
    `${JSON.stringify(identity)} is neither a person in session.identity_links nor one of their accounts ` +
      `(people: ${people.length > 0 ? people.join(", ") : "none configured"}); ` +
      "to delete a single key use sessiond sessions delete",
    { details: { field: "identity", identity, people } },
  );
}

/** Whether `key` is one of `accounts` (lower-cased), read with or without an agent prefix and thread suffix. */
function belongsTo(key: string, accounts: ReadonlySet<string>, agents: readonly string[]): boolean {
  const readings = [key];
  for (const agent of agents) if (key.startsWith(`${agent}:`)) readings.push(key.slice(agent.length + 1));
  return readings.some((reading) => {
    const lower = reading.toLowerCase();
    if (accounts.has(lower)) return true;
    const thread = lower.indexOf(":thread:");
    return thread > 0 && accounts.has(lower.slice(0, thread));
  });
}

/**
 * Deletes everything of one person across their linked accounts: every generation of every key of each
 * account (case-insensitive, as links match), bare and with each configured agent's prefix, and their
 * `:thread:` variants. `identity` is a person of `links` or one of their accounts; anything else throws
 * INVALID_ARGUMENT. Keys of other people are never touched. Reads every key of the store (see
 * `storedKeys`).
 */
/** Forks of forks followed when forgetting a person, at most. */
const MAX_FORK_DEPTH = 64;

export async function forgetIdentity(
  store: Store,
  identity: string,
  links: IdentityLinks,
  agents: readonly string[] = [],
  inLanes: InLanes = direct,
  /** Deletes one key (in its lane); the engine's also deletes its runtime sessions and share links. */
  deleteKey: (key: string) => Promise<DeleteResult> = (key) => store.delete(key),
): Promise<ForgetResult> {
  compileIdentityLinks(links);
  const person = personOf(identity, links);
  const accounts = [...(links[person] ?? [])];
  const lowered = new Set(accounts.map((a) => a.toLowerCase()));
  const candidates = new Set<string>();
  // The exact keys too, in case one was created after the listing below.
  for (const account of accounts) {
    candidates.add(account);
    for (const agent of agents) candidates.add(`${agent}:${account}`);
  }
  for (const key of await storedKeys(store)) if (belongsTo(key, lowered, agents)) candidates.add(key);
  const result: ForgetResult = { person, accounts, keys: [], sessions: 0, entries: 0 };
  const forget = async (key: string, depth: number): Promise<void> => {
    let deleted: DeleteResult;
    try {
      deleted = await inLanes([key], () => deleteKey(key));
    } catch (error) {
      // The person's history lives on in forks of it: they go first (their own forks before them).
      if (!isSessiondError(error, "SESSION_HAS_FORKS") || depth > MAX_FORK_DEPTH) throw error;
      const forks = (error.details?.forks ?? []) as Array<{ key: string }>;
      for (const fork of new Set(forks.map((f) => f.key))) await forget(fork, depth + 1);
      deleted = await inLanes([key], () => deleteKey(key));
    }
    if (deleted.sessions === 0) return;
    result.keys.push({ key, ...deleted });
    result.sessions += deleted.sessions;
    result.entries += deleted.entries;
  };
  for (const key of candidates) await forget(key, 0);
  result.keys.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return result;
}
