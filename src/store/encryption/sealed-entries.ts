import { type Entry, type EntryBody, entryBody, makeEntry } from "../../model/entry.js";
import { open, seal } from "./envelope.js";

/**
 * An entry as a driver stores it under encryption: its header (id, seq, ts, idempotency key) and `type` in
 * clear, the rest of its body in `sealed`. `type` stays clear because drivers select by it (SQLite's kept
 * context leaves compactions out); idempotency keys stay clear because they are looked up (they are the
 * platforms' message ids, not message text).
 */
export type SealedEntry = Entry & { sealed: string };

export const UNREADABLE = "ENTRY_UNREADABLE";
const TITLE_PREFIX = "sealed:";

const entryAad = (sessionId: string, seq: number) => `entry/${sessionId}/${seq}`;

export function isSealed(entry: Entry): entry is SealedEntry {
  return typeof (entry as Partial<SealedEntry>).sealed === "string";
}

/** The stored form of `entry` (a new object: the caller's entry is left as it is). */
export function sealEntry(key: Buffer, entry: Entry): Entry {
  const sealed = seal(key, JSON.stringify(entryBody(entry)), entryAad(entry.sessionId, entry.seq));
  const stored = { type: entry.type, sealed } as unknown as EntryBody;
  return makeEntry(entry, stored);
}

/**
 * The entry as it was appended; `storedAs` is the session id its row belongs to (a fork reads its origin's
 * rows). A body that does not open (no key, a damaged envelope) comes back as an error note in its place:
 * the rest of the history still reads.
 */
export function openEntry(
  key: Buffer | undefined,
  entry: Entry,
  storedAs: string,
): { entry: Entry; damaged: boolean } {
  if (!isSealed(entry)) return { entry, damaged: false };
  const plain = key && open(key, entry.sealed, entryAad(storedAs, entry.seq));
  let body: EntryBody | undefined;
  if (plain) {
    try {
      body = JSON.parse(plain.toString("utf8")) as EntryBody;
    } catch {
      body = undefined;
    }
  }
  if (body && typeof body === "object" && body.type === entry.type)
    return { entry: makeEntry(entry, body), damaged: false };
  const note: EntryBody = {
    type: "note",
    level: "error",
    code: UNREADABLE,
    text: key
      ? `entry ${entry.seq} could not be opened: its sealed body is damaged`
      : `entry ${entry.seq} could not be opened: its session's data key is gone or damaged`,
  };
  return { entry: makeEntry(entry, note), damaged: true };
}

export function sealTitle(key: Buffer, sessionId: string, title: string): string {
  return title === "" ? "" : TITLE_PREFIX + seal(key, title, `title/${sessionId}`);
}

/** A sealed title opened; a clear one (a session from before encryption) as it is; "" when it does not open. */
export function openTitle(key: Buffer | undefined, sessionId: string, title: string): string {
  if (!title.startsWith(TITLE_PREFIX)) return title;
  const plain = key && open(key, title.slice(TITLE_PREFIX.length), `title/${sessionId}`);
  return plain ? plain.toString("utf8") : "";
}
