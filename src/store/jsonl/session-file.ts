import type { Entry, EntryBody } from "../../model/entry.js";
import { estimateTokens, makeEntry } from "../../model/entry.js";
import { parseEntryInput } from "../../model/entry-schema.js";
import type { ChatType } from "../../model/envelope.js";
import type { Session } from "../../model/session.js";
import type { KeyedSession } from "../encryption/data-keys.js";
import { isSealedBody } from "../encryption/sealed-entries.js";
import { foldEntry, newSession } from "../session-log.js";
import {
  type DecodedLine,
  decodeLine,
  derivedUlid,
  type ForkedFromField,
  isMetadataLine,
  type MetadataLine,
} from "./crabtalk-format.js";
import { parseStem, stemOf } from "./file-names.js";

/** A line that could not be read: reported with its file and line number, never dropped silently. */
export interface LineProblem {
  file: string;
  /** 1-based line number. */
  line: number;
  reason: string;
}

export interface ParsedSessionFile {
  meta: MetadataLine;
  /** Built from the metadata line and the entries; key, generation and overrides as the file says. */
  session: Session;
  /** In seq order; gap-free unless a line in the middle was unreadable (reported). */
  entries: Entry[];
  /** Whether the file was written by CrabTalk (no sessiond fields on its metadata line). */
  foreign: boolean;
  problems: LineProblem[];
  /** Bytes up to the end of the last complete line. */
  completeBytes: number;
  /** A last line without its newline that is not a complete JSON object: a torn write. */
  tornTail: boolean;
  /** A last line that is complete JSON but lacks its newline. */
  missingNewline: boolean;
  /** Byte offset of each entry's line, by seq. */
  offsets: Map<number, number>;
}

/** The key a CrabTalk session file belongs to: CrabTalk's scope, agent + sender (`crabtalk` scope). */
export function crabtalkKey(agent: string, createdBy: string): string {
  return `${agent}:${createdBy}`;
}

/** Who a file whose metadata line is damaged belongs to, when the store knows (its index). */
export type KnownIdentity = Pick<
  Session,
  "id" | "key" | "generation" | "agent" | "channel" | "createdBy" | "chatType" | "createdAt"
>;

/**
 * Reads a session file's bytes. Every line that cannot be read is reported (file, line) and skipped; a
 * damaged metadata line does not hide the entries after it: the session's identity then comes from
 * `known` (the store's index), else from the file name. Returns undefined (with a problem) only when the
 * file holds nothing to attribute: no metadata line and no entry.
 */
export function parseSessionFile(
  fileName: string,
  bytes: Buffer,
  known?: KnownIdentity,
): { parsed?: ParsedSessionFile; problems: LineProblem[] } {
  const problems: LineProblem[] = [];
  const problem = (line: number, reason: string) => problems.push({ file: fileName, line, reason });
  const lines: Array<{ text: string; offset: number; complete: boolean }> = [];
  let start = 0;
  while (start < bytes.length) {
    const end = bytes.indexOf(10, start);
    const stop = end === -1 ? bytes.length : end;
    const text = bytes.toString("utf8", start, stop);
    if (text.includes("\uFFFD") && Buffer.byteLength(text) !== stop - start)
      problem(lines.length + 1, "invalid UTF-8, replaced with U+FFFD");
    lines.push({ text, offset: start, complete: end !== -1 });
    if (end === -1) break;
    start = end + 1;
  }
  let tornTail = false;
  let missingNewline = false;
  const last = lines.at(-1);
  if (last && !last.complete) {
    if (isCompleteJson(last.text)) missingNewline = true;
    else {
      tornTail = true;
      lines.pop();
      problem(lines.length + 1, `torn last line (${bytes.length - last.offset} bytes, no newline) left out`);
    }
  }
  const completeBytes = tornTail ? (last?.offset ?? 0) : bytes.length;
  const first = lines[0];
  let meta = first ? metadataOf(first.text, (reason) => problem(1, reason)) : undefined;
  let firstEntryLine = 1;
  if (!meta) {
    if (!first) {
      problem(1, tornTail ? "nothing but a torn metadata line" : "empty file");
      return { problems };
    }
    // Line 1 may be an entry (the metadata line lost) or the damaged metadata line itself.
    if (decodeLine(first.text).kind === "entry") firstEntryLine = 0;
    meta = recoveredMeta(fileName, known);
    if (!meta) {
      problem(1, "line 1 is not a metadata line, and the file's name says nothing of whose it is");
      return { problems };
    }
    problem(
      1,
      `line 1 is not a valid metadata line; the session is read with the identity ${known ? "the store's index or the file's claim" : "its file name"} gives`,
    );
  }
  const foreign = meta.session_id === undefined;
  const createdAt = known?.createdAt ?? parseTime(meta.created_at);
  const sessionId = known?.id ?? meta.session_id ?? derivedUlid(createdAt, `crabtalk:${stemOf(fileName)}`);
  // A metadata line without sessiond's fields (CrabTalk wrote or rewrote it): whose file it is comes from
  // `known` (the index, or the file's claim) where the store knows.
  const who = foreign && known ? known : undefined;
  const chatType = meta.chat_type ?? who?.chatType;
  const session = newSession(
    meta.key ?? who?.key ?? crabtalkKey(meta.agent, meta.created_by),
    {
      agent: meta.agent,
      channel: meta.channel ?? who?.channel ?? "crabtalk",
      createdBy: meta.sender ?? who?.createdBy ?? meta.created_by,
      ...(chatType !== undefined ? { chatType: chatType as ChatType } : {}),
    },
    meta.generation ?? who?.generation ?? 1,
    createdAt,
  );
  session.id = sessionId;
  const origin =
    meta.forked_from === undefined ? undefined : forkedFromOf(meta.forked_from, (r) => problem(1, r));
  if (origin) inheritFrom(session, origin);
  const dataKey = meta.data_key ?? (known as KeyedSession | undefined)?.dataKey;
  if (typeof dataKey === "string") (session as KeyedSession).dataKey = dataKey;
  const decoded = lines.map((line, i) =>
    i < firstEntryLine || line.text.trim() === "" ? undefined : decodeLine(line.text),
  );
  // The lowest seq a sessiond line claims from each line on: a line without sessiond's fields is numbered
  // by its place only where no later sessiond line already holds that number.
  const claimedFrom = new Array<number>(lines.length + 1).fill(Number.POSITIVE_INFINITY);
  for (let i = lines.length - 1; i >= 0; i--) {
    const d = decoded[i];
    const seq = d?.kind === "entry" && Number.isSafeInteger(d.seq) ? d.seq : Number.POSITIVE_INFINITY;
    claimedFrom[i] = Math.min(seq, claimedFrom[i + 1]!);
  }
  const entries: Entry[] = [];
  const offsets = new Map<number, number>();
  let lastSeq = origin?.seq ?? 0;
  let keptFrom = session.contextFromSeq;
  for (let i = firstEntryLine; i < lines.length; i++) {
    const line = lines[i]!;
    const d = decoded[i];
    if (!d || d.kind === "kept-copy") continue;
    const lineProblem = (reason: string) => problem(i + 1, reason);
    let entry: Entry | undefined;
    switch (d.kind) {
      case "invalid":
        lineProblem(d.reason);
        continue;
      case "entry": {
        const invalid = entryProblem(d);
        if (invalid) {
          lineProblem(`${invalid}; line skipped`);
          continue;
        }
        // A sealed body's skeleton is the sealing driver's to check, once opened (encryption/).
        const body = isSealedBody(d.body) ? d.body : checkedBody(d.body, d.seq);
        if (typeof body === "string") {
          lineProblem(`${body}; line skipped`);
          continue;
        }
        if (d.seq <= lastSeq) {
          lineProblem(`seq ${d.seq} repeats or goes back (after ${lastSeq}); line skipped`);
          continue;
        }
        if (d.seq > lastSeq + 1) lineProblem(`entries ${lastSeq + 1}..${d.seq - 1} are missing`);
        const header = { id: d.id, sessionId, seq: d.seq, ts: d.ts };
        entry = makeEntry(
          d.idempotencyKey === undefined ? header : { ...header, idempotencyKey: d.idempotencyKey },
          body,
        );
        break;
      }
      case "foreign-message":
      case "foreign-compact": {
        const seq = lastSeq + 1;
        if (claimedFrom[i + 1]! <= seq) {
          lineProblem(
            `a line without sessiond's fields among sessiond's entries (seq ${seq} is taken); line skipped`,
          );
          continue;
        }
        const body: EntryBody =
          d.kind === "foreign-message"
            ? { type: "message", role: d.role, content: d.content, ...d.fields }
            : {
                type: "compaction",
                summary: d.summary,
                fromSeq: Math.min(keptFrom, Math.max(1, seq - 1)),
                throughSeq: seq - 1,
                firstKeptSeq: seq + 1,
                tokensBefore: 0,
                tokensAfter: estimateTokens(d.summary),
                summarizer: "crabtalk",
              };
        entry = makeEntry(
          { id: derivedUlid(createdAt, `${sessionId}:${seq}`), sessionId, seq, ts: createdAt },
          body,
        );
        break;
      }
    }
    if (entry.type === "compaction") keptFrom = entry.firstKeptSeq;
    lastSeq = entry.seq;
    offsets.set(entry.seq, line.offset);
    entries.push(entry);
    foldEntry(session, entry);
  }
  problems.sort((a, b) => a.line - b.line);
  if (session.title === "" && meta.title) session.title = meta.title;
  const closing = entries.at(-1);
  if (closing?.type === "reset") {
    session.state = "archived";
    session.archivedAt = closing.ts;
  }
  return {
    parsed: {
      meta,
      session,
      entries,
      foreign,
      problems,
      completeBytes,
      tornTail,
      missingNewline,
      offsets,
    },
    problems,
  };
}

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** The metadata line's `forked_from`, if every field is what sessiond writes; else reported and ignored. */
function forkedFromOf(value: unknown, report: (reason: string) => void): ForkedFromField | undefined {
  const v = value as Partial<Record<keyof ForkedFromField, unknown>> | null;
  const count = (n: unknown) => Number.isSafeInteger(n) && (n as number) >= 0;
  const ok =
    typeof v === "object" &&
    v !== null &&
    typeof v.key === "string" &&
    v.key !== "" &&
    typeof v.session_id === "string" &&
    ULID.test(v.session_id) &&
    count(v.seq) &&
    count(v.message_count) &&
    count(v.approx_tokens) &&
    count(v.context_from_seq) &&
    (v.context_from_seq as number) >= 1 &&
    (v.context_from_seq as number) <= (v.seq as number) + 1 &&
    (v.last_compaction_seq === undefined ||
      (count(v.last_compaction_seq) && (v.last_compaction_seq as number) <= (v.seq as number)));
  if (ok) return v as ForkedFromField;
  report("metadata forked_from is damaged; the session is read without the history it was forked from");
  return undefined;
}

/** A fork's session as it began: its first `origin.seq` entries are its origin's. */
function inheritFrom(session: Session, origin: ForkedFromField): void {
  session.forkedFrom = { key: origin.key, sessionId: origin.session_id, seq: origin.seq };
  session.entryCount = origin.seq;
  session.messageCount = origin.message_count;
  session.approxTokens = origin.approx_tokens;
  session.contextFromSeq = origin.context_from_seq;
  if (origin.last_compaction_seq !== undefined) session.lastCompactionSeq = origin.last_compaction_seq;
}

/** What is wrong with a sessiond line's header, if anything. */
function entryProblem(d: Extract<DecodedLine, { kind: "entry" }>): string | undefined {
  if (!Number.isSafeInteger(d.seq) || d.seq < 1) return `seq ${d.seq} is not a positive safe integer`;
  if (!ULID.test(d.id)) return "id is not a ULID";
  if (!Number.isSafeInteger(d.ts) || d.ts < 0) return `ts ${d.ts} is not a time`;
  return undefined;
}

/**
 * The body as the entry schema checks it (what an append would have accepted), or why it is not one.
 * A compaction must also summarise entries before it and keep from at most its own seq.
 */
function checkedBody(body: EntryBody, seq: number): EntryBody | string {
  let checked: EntryBody;
  try {
    checked = parseEntryInput(body) as EntryBody;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
  if (checked.type === "compaction" && (checked.throughSeq >= seq || checked.firstKeptSeq > seq))
    return `invalid compaction: entry ${seq} must summarise entries before it and keep from at most ${seq}`;
  return checked;
}

/** Line 1 as a metadata line, if it is a valid one: fields of the wrong type make it damaged. */
/**
 * Line 1 as a metadata line, or undefined when it is not one or its identity (key, session id, generation)
 * is damaged. A descriptive field of the wrong type (channel, chat type, title) is left out and reported,
 * without costing the session its identity.
 */
function metadataOf(text: string, report: (reason: string) => void): MetadataLine | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isMetadataLine(value)) return undefined;
  const optional = (field: unknown, ok: (v: unknown) => boolean) => field === undefined || ok(field);
  const isString = (v: unknown) => typeof v === "string";
  const identity =
    optional(value.key, (v) => isString(v) && v !== "") &&
    optional(value.sender, isString) &&
    optional(value.session_id, (v) => isString(v) && ULID.test(v as string)) &&
    optional(value.generation, (v) => Number.isSafeInteger(v) && (v as number) >= 1);
  if (!identity) return undefined;
  const line: Record<string, unknown> = { ...value };
  const drop = (field: "channel" | "chat_type" | "title", ok: (v: unknown) => boolean, what: string) => {
    const v = line[field];
    if (v === undefined || ok(v)) return;
    if (field === "title") line.title = "";
    else delete line[field];
    report(
      `metadata ${field} is not ${typeof v === "string" ? what : "a string"} (${JSON.stringify(v)}); left out`,
    );
  };
  drop("channel", isString, "a string");
  drop("chat_type", (v) => CHAT_TYPES.has(v as string), "one of direct, group, channel, thread");
  drop("title", isString, "a string");
  return line as unknown as MetadataLine;
}

const CHAT_TYPES = new Set<unknown>(["direct", "group", "channel", "thread"]);

/** The metadata a damaged line stood for: the index's record of the session, else what the file name says. */
function recoveredMeta(fileName: string, known: KnownIdentity | undefined): MetadataLine | undefined {
  if (known) {
    const line: MetadataLine = {
      agent: known.agent,
      created_by: known.createdBy,
      created_at: new Date(known.createdAt).toISOString(),
      title: "",
      uptime_secs: 0,
      key: known.key,
      session_id: known.id,
      generation: known.generation,
      channel: known.channel,
    };
    if (known.chatType !== undefined) line.chat_type = known.chatType;
    return line;
  }
  const stem = parseStem(stemOf(fileName));
  const split = stem?.prefix.indexOf("_") ?? -1;
  if (!stem || split === -1) return undefined;
  return {
    agent: stem.prefix.slice(0, split),
    created_by: stem.prefix.slice(split + 1),
    created_at: new Date(0).toISOString(),
    title: "",
    uptime_secs: 0,
  };
}

function isCompleteJson(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null;
  } catch {
    return false;
  }
}

function parseTime(text: unknown): number {
  const ms = typeof text === "string" ? Date.parse(text) : Number.NaN;
  return Number.isFinite(ms) ? ms : 0;
}
