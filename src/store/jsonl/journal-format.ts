import { crc32 } from "node:zlib";
import { isSessionFileName } from "./file-names.js";
import { jsonString } from "./json-line.js";

/**
 * The journal's bytes. A batch is one frame: `{"b":epoch,"n":length,"c":crc32}\n` and `length` bytes of
 * records, each `{"f":file,"o":offset,"n":length}\n` and the bytes that go to that session file at that
 * offset. The file is preallocated and reused, so what follows the last frame may be zeros or frames of an
 * earlier epoch (before the last checkpoint): reading stops at the first frame that is not whole, not of
 * the first frame's epoch, or whose checksum does not match (a torn write, never acknowledged).
 * Journals written before frames (records from the start of the file, appended) are read as well.
 */

const FRAME_START = Buffer.from('{"b":');
/** A frame header is short; a newline further away means this is no frame header. */
const MAX_FRAME_HEADER = 128;

export function recordHeader(file: string, offset: number, length: number): string {
  return `{"f":${jsonString(file)},"o":${offset},"n":${length}}\n`;
}

export function frameHeader(epoch: number, payload: Uint8Array): Buffer {
  return Buffer.from(`{"b":${epoch},"n":${payload.length},"c":${crc32(payload)}}\n`, "latin1");
}

export type JournalItem =
  | { kind: "record"; file: string; offset: number; bytes: Buffer }
  | { kind: "problem"; reason: string };

/** The records a writer may have acknowledged, in order; a problem, if any, is the last item. */
export function* journalRecords(journal: Buffer): Generator<JournalItem> {
  if (!journal.subarray(0, FRAME_START.length).equals(FRAME_START)) {
    yield* records(journal, 0, journal.length);
    return;
  }
  let epoch: number | undefined;
  for (let at = 0; ; ) {
    const frame = readFrame(journal, at);
    if (!frame || (epoch !== undefined && frame.epoch !== epoch)) return;
    epoch = frame.epoch;
    for (const item of records(journal, frame.start, frame.end)) {
      yield item;
      if (item.kind === "problem") return;
    }
    at = frame.end;
  }
}

function readFrame(journal: Buffer, at: number): { epoch: number; start: number; end: number } | undefined {
  const newline = journal.subarray(at, at + MAX_FRAME_HEADER).indexOf(10);
  if (newline === -1) return undefined;
  let header: unknown;
  try {
    header = JSON.parse(journal.toString("latin1", at, at + newline));
  } catch {
    return undefined;
  }
  if (typeof header !== "object" || header === null) return undefined;
  const { b, n, c } = header as { b?: unknown; n?: unknown; c?: unknown };
  if (!Number.isSafeInteger(b) || !Number.isSafeInteger(n) || (n as number) < 0 || typeof c !== "number")
    return undefined;
  const start = at + newline + 1;
  const end = start + (n as number);
  if (end > journal.length || crc32(journal.subarray(start, end)) !== c) return undefined;
  return { epoch: b as number, start, end };
}

function* records(journal: Buffer, from: number, end: number): Generator<JournalItem> {
  for (let at = from; at < end; ) {
    // Zeros: the unused rest of a journal that was never written past here.
    if (journal[at] === 0) return;
    const newline = journal.indexOf(10, at);
    if (newline === -1 || newline >= end) return; // a torn header: never acknowledged
    let header: { f?: unknown; o?: unknown; n?: unknown };
    try {
      header = JSON.parse(journal.subarray(at, newline).toString("utf8")) as typeof header;
    } catch {
      yield { kind: "problem", reason: "journal header is not JSON; the rest of the journal is skipped" };
      return;
    }
    const { f, o, n } = header;
    if (
      typeof f !== "string" ||
      typeof o !== "number" ||
      typeof n !== "number" ||
      !isSessionFileName(f) ||
      /[/\\]/.test(f)
    ) {
      yield { kind: "problem", reason: "not a journal record; the rest of the journal is skipped" };
      return;
    }
    const start = newline + 1;
    if (start + n > end) return; // a torn record: never acknowledged
    yield { kind: "record", file: f, offset: o, bytes: journal.subarray(start, start + n) };
    at = start + n;
  }
}
