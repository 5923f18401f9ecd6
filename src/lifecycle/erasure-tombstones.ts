import { createHmac, randomBytes } from "node:crypto";
import { closeSync, fsyncSync, openSync, readFileSync, renameSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Route } from "../keys/index.js";
import type { Envelope } from "../model/envelope.js";
import { SessiondError } from "../model/errors.js";

/** The file in the data dir that remembers erased subjects, as keyed hashes only (docs/erasure.md). */
export const TOMBSTONE_FILE = "erased-subjects.json";

interface Tombstone {
  /** Keyed hashes of the subject's accounts, lower-cased. */
  accounts: string[];
  /** Keyed hashes of the platform message ids of the erased messages (what a redelivery carries). */
  messages: string[];
  erasedAt: string;
}

interface TombstoneState {
  version: 1;
  /** The HMAC key, random per data dir: the hashes cannot be matched against another dir's. */
  secret: string;
  subjects: Tombstone[];
}

/**
 * Erased subjects, so a redelivered message does not bring one back: a message routed to an erased
 * account whose platform message id was erased with it is refused (SUBJECT_ERASED); a new message from
 * the person is a new conversation and is taken. Nothing in the file is the id in clear: accounts and
 * message ids are HMAC-SHA-256 hashes under a random key kept in the same file (mode 0600), so the file
 * names no one to a reader who does not already hold the id; with the key, a guessed id can be checked,
 * which is what the refusal needs.
 */
export class ErasureTombstones {
  private state: TombstoneState | undefined;
  private accounts = new Set<string>();
  private messages = new Set<string>();

  constructor(private readonly dataDir: string) {
    this.state = readState(this.path);
    this.index();
  }

  get path(): string {
    return join(this.dataDir, TOMBSTONE_FILE);
  }

  /** Records an erasure; written atomically (temp file, fsync, rename). */
  record(accounts: readonly string[], messageIds: Iterable<string>, erasedAt: string): void {
    const state = this.state ?? { version: 1, secret: randomBytes(32).toString("hex"), subjects: [] };
    const hash = (value: string) => hmac(state.secret, value);
    state.subjects.push({
      accounts: [...new Set(accounts.map((a) => hash(a.toLowerCase())))],
      messages: [...new Set([...messageIds].map(hash))],
      erasedAt,
    });
    writeState(this.path, state);
    this.state = state;
    this.index();
  }

  /**
   * The key of the hashes, made on the first erasure: the cost ledger hashes an erased key with it too, so
   * one person's conversations stay grouped by the same hash.
   */
  secret(): string {
    this.state ??= { version: 1, secret: randomBytes(32).toString("hex"), subjects: [] };
    return this.state.secret;
  }

  /** Throws SUBJECT_ERASED for a redelivered message of an erased subject. */
  check(route: Route, envelope: Envelope): void {
    const state = this.state;
    const id = envelope.platformMessageId;
    if (!state || id === undefined || !this.messages.has(hmac(state.secret, id))) return;
    const readings = [route.key, `${envelope.channel}:${envelope.sender.id}`];
    const bare = route.key.startsWith(`${route.agent}:`)
      ? route.key.slice(route.agent.length + 1)
      : route.key;
    readings.push(bare, bare.split(":thread:")[0] ?? bare);
    if (!readings.some((reading) => this.accounts.has(hmac(state.secret, reading.toLowerCase())))) return;
    throw new SessiondError(
      "SUBJECT_ERASED",
      `message ${id} was erased with its sender's data (sessiond forget --subject); its redelivery is refused`,
      { details: { key: route.key } },
    );
  }

  /**
   * Whether `key` is an erased subject's (bare, with one of `agents`' prefix, or a `:thread:` of it): what
   * an import skips so an old export does not bring the person back.
   */
  erasedKey(key: string, agents: readonly string[] = []): boolean {
    const state = this.state;
    if (!state) return false;
    const readings = [key];
    for (const agent of agents) if (key.startsWith(`${agent}:`)) readings.push(key.slice(agent.length + 1));
    for (const reading of [...readings]) readings.push(reading.split(":thread:")[0] ?? reading);
    return readings.some((reading) => this.accounts.has(hmac(state.secret, reading.toLowerCase())));
  }

  private index(): void {
    this.accounts = new Set(this.state?.subjects.flatMap((s) => s.accounts));
    this.messages = new Set(this.state?.subjects.flatMap((s) => s.messages));
  }
}

function hmac(secret: string, value: string): string {
  return createHmac("sha256", Buffer.from(secret, "hex")).update(value, "utf8").digest("hex");
}

function readState(path: string): TombstoneState | undefined {
  let raw: string;
  try {
    raw = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new SessiondError("STORE_UNAVAILABLE", `cannot read ${path}: ${(error as Error).message}`);
  }
  try {
    const state = JSON.parse(raw) as TombstoneState;
    if (state.version === 1 && typeof state.secret === "string" && Array.isArray(state.subjects))
      return state;
  } catch {
    // reported below
  }
  throw new SessiondError(
    "STORE_CORRUPT",
    `${path} is unreadable: it records erased subjects; restore it from a backup (deleting it lets redelivered messages of erased subjects in again)`,
    { details: { path } },
  );
}

function writeState(path: string, state: TombstoneState): void {
  const temp = `${path}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    writeFileSync(temp, `${JSON.stringify(state)}\n`, { mode: 0o600, flag: "wx" });
    const fd = openSync(temp, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temp, path);
  } catch (error) {
    try {
      unlinkSync(temp);
    } catch {
      // nothing was written
    }
    throw new SessiondError("STORE_UNAVAILABLE", `cannot write ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}
