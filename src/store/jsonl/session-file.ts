import type { Entry, EntryBody } from "../../model/entry.js";
import { estimateTokens, makeEntry } from "../../model/entry.js";
import type { ChatType } from "../../model/envelope.js";
import type { Session } from "../../model/session.js";
import { foldEntry, newSession } from "../session-log.js";
import {
  type DecodedLine,
  decodeLine,
  derivedUlid,
  isMetadataLine,
  type MetadataLine,
} from "./crabtalk-format.js";
import { stemOf } from "./file-names.js";

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

/**
 * Reads a session file's bytes. Returns undefined (with a problem) when the first line is not a
 * metadata line: nothing in the file can be attributed then.
 */
export function parseSessionFile(
  fileName: string,
  bytes: Buffer,
): { parsed?: ParsedSessionFile; problems: LineProblem[] } {
  const problems: LineProblem[] = [];
  const lines: Array<{ text: string; offset: number; complete: boolean }> = [];
  let start = 0;
  while (start < bytes.length) {
    const end = bytes.indexOf(10, start);
    if (end === -1) {
      lines.push({ text: bytes.subarray(start).toString("utf8"), offset: start, complete: false });
      break;
    }
    lines.push({ text: bytes.subarray(start, end).toString("utf8"), offset: start, complete: true });
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
    }
  }
  const completeBytes = tornTail ? (last?.offset ?? 0) : bytes.length;
  const first = lines[0];
  let meta: unknown;
  try {
    meta = first ? JSON.parse(first.text) : undefined;
  } catch {
    meta = undefined;
  }
  if (!isMetadataLine(meta)) {
    problems.push({
      file: fileName,
      line: 1,
      reason: first ? "line 1 is not a metadata line" : "empty file",
    });
    return { problems };
  }
  const foreign = meta.session_id === undefined;
  const createdAt = parseTime(meta.created_at);
  const sessionId = meta.session_id ?? derivedUlid(createdAt, `crabtalk:${stemOf(fileName)}`);
  const session = newSession(
    meta.key ?? crabtalkKey(meta.agent, meta.created_by),
    {
      agent: meta.agent,
      channel: meta.channel ?? "crabtalk",
      createdBy: meta.created_by,
      ...(meta.chat_type !== undefined ? { chatType: meta.chat_type as ChatType } : {}),
    },
    meta.generation ?? 1,
    createdAt,
  );
  session.id = sessionId;
  const entries: Entry[] = [];
  const offsets = new Map<number, number>();
  let lastSeq = 0;
  let keptFrom = 1;
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.text.trim() === "") continue;
    const decoded: DecodedLine = decodeLine(line.text);
    const problem = (reason: string) => problems.push({ file: fileName, line: i + 1, reason });
    let entry: Entry | undefined;
    switch (decoded.kind) {
      case "invalid":
        problem(decoded.reason);
        continue;
      case "kept-copy":
        continue;
      case "entry": {
        if (decoded.seq <= lastSeq) {
          problem(`seq ${decoded.seq} repeats or goes back (after ${lastSeq}); line skipped`);
          continue;
        }
        if (decoded.seq > lastSeq + 1) problem(`entries ${lastSeq + 1}..${decoded.seq - 1} are missing`);
        const header = { id: decoded.id, sessionId, seq: decoded.seq, ts: decoded.ts };
        entry = makeEntry(
          decoded.idempotencyKey === undefined
            ? header
            : { ...header, idempotencyKey: decoded.idempotencyKey },
          decoded.body,
        );
        break;
      }
      case "foreign-message":
      case "foreign-compact": {
        const seq = lastSeq + 1;
        const body: EntryBody =
          decoded.kind === "foreign-message"
            ? { type: "message", role: decoded.role, content: decoded.content }
            : {
                type: "compaction",
                summary: decoded.summary,
                fromSeq: Math.min(keptFrom, Math.max(1, seq - 1)),
                throughSeq: seq - 1,
                firstKeptSeq: seq + 1,
                tokensBefore: 0,
                tokensAfter: estimateTokens(decoded.summary),
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
