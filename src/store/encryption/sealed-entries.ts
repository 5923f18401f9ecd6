import { type Entry, type EntryBody, entryBody, makeEntry } from "../../model/entry.js";
import { open, seal } from "./envelope.js";

/**
 * An entry as a driver stores it under encryption: its header (id, seq, ts, idempotency key) and a skeleton
 * of its body in clear, the whole body in `sealed`. The skeleton holds what drivers fold or select by and
 * no text: `type` (SQLite's kept context leaves compactions out), a message's `role` with empty `content`, a
 * compaction's seq pointers and token counts, a reset's cause, a title entry's title sealed as the
 * session's. Idempotency keys stay clear because they are looked up (platforms' message ids, not text).
 */
export type SealedEntry = Entry & { sealed: string };

export const UNREADABLE = "ENTRY_UNREADABLE";
const TITLE_PREFIX = "sealed:";

const entryAad = (sessionId: string, seq: number) => `entry/${sessionId}/${seq}`;

export function isSealed(entry: Entry): entry is SealedEntry {
  return typeof (entry as Partial<SealedEntry>).sealed === "string";
}

/**
 * Whether a body read from a file is a sealed one whose skeleton a driver can fold (the fields `foldEntry`
 * reads are there, of their types); the rest is checked when it is opened.
 */
export function isSealedBody(body: EntryBody): boolean {
  const b = body as unknown as Partial<Record<string, unknown>>;
  if (typeof b.sealed !== "string") return false;
  const seq = (n: unknown) => Number.isSafeInteger(n) && (n as number) >= 1;
  switch (body.type) {
    case "message":
      return typeof b.role === "string" && typeof b.content === "string";
    case "compaction":
      return seq(b.fromSeq) && seq(b.throughSeq) && seq(b.firstKeptSeq) && typeof b.summary === "string";
    case "title":
      return typeof b.title === "string";
    case "reset":
      return typeof b.cause === "string";
    case "note":
      return typeof b.text === "string";
    case "usage":
      return true;
    default:
      return false;
  }
}

/** Whether a stored title is sealed (a JSONL file name then carries no title). */
export function isSealedTitle(title: string): boolean {
  return title.startsWith(TITLE_PREFIX);
}

/** The stored form of `entry` (a new object: the caller's entry is left as it is). */
export function sealEntry(key: Buffer, entry: Entry): Entry {
  const sealed = seal(key, JSON.stringify(entryBody(entry)), entryAad(entry.sessionId, entry.seq));
  return makeEntry(entry, { ...skeleton(key, entry), sealed } as unknown as EntryBody);
}

function skeleton(key: Buffer, entry: Entry): EntryBody {
  switch (entry.type) {
    case "message":
      return { type: "message", role: entry.role, content: "" };
    case "compaction": {
      const { fromSeq, throughSeq, firstKeptSeq, tokensBefore, tokensAfter } = entry;
      const numbers = { fromSeq, throughSeq, firstKeptSeq, tokensBefore, tokensAfter };
      return { type: "compaction", summary: "", ...numbers, summarizer: "sealed" };
    }
    case "title":
      return { type: "title", title: sealTitle(key, entry.sessionId, entry.title) };
    case "reset":
      return { type: "reset", cause: entry.cause };
    case "note":
      return { type: "note", text: "" };
    case "usage":
      return { type: "usage" };
  }
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
