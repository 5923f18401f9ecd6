import type Database from "better-sqlite3";
import { sizeText } from "../limits.js";
import { isObject } from "../messages.js";
import type { SourceFiles, Where } from "../source-files.js";
import type { SourceRead, SourceSession } from "../types.js";
import { decompressCapped } from "../zstd-capped.js";
import { openclawChat } from "./openclaw-keys.js";
import { openclawSession } from "./openclaw-session.js";
import { readTranscript, type TranscriptLine } from "./openclaw-transcript.js";
import { cappedText, columnsOf, hasTable, rowWithinCaps, withDatabase } from "./sqlite-rows.js";

interface NodeRow {
  session_key: string;
  current_session_id: string;
  entry_json: unknown;
  label: unknown;
}
interface WindowRow {
  session_id: string;
  previous_session_id: unknown;
  display_name: unknown;
  created_at: unknown;
}
interface EventRow {
  seq: number;
  event_json: unknown;
  event_json_bytes: number;
  event_zstd: unknown;
  event_zstd_bytes: number;
  event_utf8_bytes: unknown;
}
interface ArchiveRow {
  session_id: string;
  generation: number;
  encoding: unknown;
  archive_blob: unknown;
  archive_blob_bytes: number;
  archive_name: unknown;
}

/**
 * OpenClaw 2026.9 (peer-formats §1.5): `agents/<id>/agent/openclaw-agent.sqlite`. `session_nodes` holds a
 * key's current window, `session_windows` the chain of its windows (`previous_session_id`),
 * `transcript_events` each window's lines (`event_json`, or a zstd frame in `event_zstd` checked against
 * `event_utf8_bytes`), `session_transcript_archives` the whole JSONL of reset or deleted windows (zstd or
 * plain). A key's earlier windows come in as archived generations, oldest first; titles from
 * `display_name` / `label`.
 */
export function readAgentDatabase(
  files: SourceFiles,
  file: string,
  defaultAgent: string,
  read: SourceRead,
): void {
  const cap = files.limits.lineBytes;
  withDatabase(files, file, ["session_nodes", "transcript_events"], "an OpenClaw agent database", (db) => {
    const nodes = db
      .prepare(
        "SELECT session_key, current_session_id, entry_json, label FROM session_nodes ORDER BY session_key",
      )
      .all() as NodeRow[];
    const windows = hasTable(db, "session_windows")
      ? (db.prepare(
          "SELECT session_id, previous_session_id, display_name, created_at FROM session_windows WHERE session_key = ? ORDER BY created_at, session_id",
        ) as Database.Statement<[string], WindowRow>)
      : undefined;
    const zstd = columnsOf(db, "transcript_events").has("event_zstd");
    const events = db.prepare(
      `SELECT seq, ${cappedText("event_json", cap)}, ${zstd ? `${cappedText("event_zstd", cap)}, event_utf8_bytes` : "NULL AS event_zstd, 0 AS event_zstd_bytes, NULL AS event_utf8_bytes"} FROM transcript_events WHERE session_id = ? ORDER BY seq`,
    ) as Database.Statement<[string], EventRow>;
    const archives = hasTable(db, "session_transcript_archives")
      ? (db.prepare(
          `SELECT session_id, generation, encoding, ${cappedText("archive_blob", files.limits.archiveBytes)}, archive_name FROM session_transcript_archives WHERE session_key = ? ORDER BY created_at, generation`,
        ) as Database.Statement<[string], ArchiveRow>)
      : undefined;
    for (const node of nodes) {
      const entry = parseEntry(files, node.entry_json, file, node.session_key);
      const chat = openclawChat(node.session_key, entry, defaultAgent);
      const chain = windowChain(node, windows?.all(node.session_key) ?? []);
      const archived = archives?.all(node.session_key) ?? [];
      const done = new Set<string>();
      const generations: SourceSession[] = [];
      for (const window of chain) {
        done.add(window.session_id);
        let lines = eventLines(files, file, window.session_id, events.all(window.session_id));
        const archive = archived.find((a) => a.session_id === window.session_id);
        if (lines.length === 0 && archive) lines = archiveLines(files, file, archive);
        if (lines.length === 0) continue;
        const current = window.session_id === node.current_session_id;
        const title = [window.display_name, current ? node.label : undefined].find(
          (t): t is string => typeof t === "string" && t.trim() !== "",
        );
        generations.push(
          openclawSession(
            chat,
            window.session_id,
            file,
            readTranscript(lines, read.problems, files.leftOut),
            !current,
            title,
          ),
        );
      }
      // Archives of windows the chain no longer lists come first: they ended before it began.
      for (const a of archived) {
        if (done.has(a.session_id)) continue;
        const transcript = readTranscript(archiveLines(files, file, a), read.problems, files.leftOut);
        if (transcript.items.length > 0)
          read.sessions.push(openclawSession(chat, a.session_id, file, transcript, true, undefined));
      }
      read.sessions.push(...generations);
    }
  });
}

/** The key's windows oldest first: the chain back from the current one, then any others by creation. */
function windowChain(node: NodeRow, rows: WindowRow[]): WindowRow[] {
  const byId = new Map(rows.map((r) => [r.session_id, r]));
  const chain: WindowRow[] = [];
  for (
    let id: unknown = node.current_session_id;
    typeof id === "string" && !chain.some((w) => w.session_id === id);
  ) {
    const row =
      byId.get(id) ??
      (id === node.current_session_id
        ? { session_id: id, previous_session_id: null, display_name: null, created_at: null }
        : undefined);
    if (!row) break;
    chain.unshift(row);
    id = row.previous_session_id;
  }
  const others = rows.filter((r) => !chain.includes(r) && r.session_id !== node.current_session_id);
  return [...others, ...chain];
}

function parseEntry(files: SourceFiles, json: unknown, file: string, key: string): Record<string, unknown> {
  const where = { file, row: `session_nodes ${key}` };
  const before = files.problems.length;
  const value = files.json(String(json), where, "entry_json:");
  if (isObject(value)) return value;
  if (files.problems.length > before) files.problems.pop();
  files.problems.push({ ...where, reason: "entry_json is not a JSON object" });
  return {};
}

function eventLines(files: SourceFiles, file: string, sessionId: string, rows: EventRow[]): TranscriptLine[] {
  const { problems } = files;
  const cap = files.limits.lineBytes;
  const lines: TranscriptLine[] = [];
  for (const row of rows) {
    const where = { file, row: `transcript_events ${sessionId}/${row.seq}` };
    if (!rowWithinCaps(files, Math.max(row.event_json_bytes ?? 0, row.event_zstd_bytes ?? 0), where))
      continue;
    let text: string;
    if (typeof row.event_json === "string") text = row.event_json;
    else if (row.event_zstd instanceof Uint8Array) {
      const declared = row.event_utf8_bytes;
      try {
        if (typeof declared === "number" && declared > cap)
          throw new Error(`event_utf8_bytes says ${sizeText(declared)}, over the cap of ${sizeText(cap)}`);
        const bytes = decompressCapped(row.event_zstd, cap);
        if (typeof declared === "number" && bytes.length !== declared)
          throw new Error(`${bytes.length} bytes where event_utf8_bytes says ${declared}`);
        if (!files.spend(bytes.length, where)) continue;
        text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      } catch (error) {
        problems.push({ ...where, reason: `event_zstd does not decode: ${(error as Error).message}` });
        continue;
      }
    } else {
      problems.push({ ...where, reason: "neither event_json nor event_zstd" });
      continue;
    }
    pushLine(files, text, where, lines);
  }
  return lines;
}

function archiveLines(files: SourceFiles, file: string, archive: ArchiveRow): TranscriptLine[] {
  const row = `session_transcript_archives ${archive.session_id}/${archive.generation}`;
  const cap = files.limits.archiveBytes;
  if (archive.archive_blob_bytes > cap) {
    files.problems.push({
      file,
      row,
      reason: `${sizeText(archive.archive_blob_bytes)}, over the cap of ${sizeText(cap)}; left out`,
    });
    return [];
  }
  let text: string;
  try {
    const blob = archive.archive_blob;
    if (!(blob instanceof Uint8Array) && typeof blob !== "string") throw new Error("no archive_blob");
    const bytes =
      typeof blob === "string"
        ? Buffer.from(blob, "utf8")
        : archive.encoding === "zstd"
          ? decompressCapped(blob, cap)
          : blob;
    if (!files.spend(bytes.length, { file, row })) return [];
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch (error) {
    files.problems.push({ file, row, reason: `archive does not decode: ${(error as Error).message}` });
    return [];
  }
  const lines: TranscriptLine[] = [];
  text.split("\n").forEach((line, i) => {
    if (line.trim() !== "") pushLine(files, line, { file, row: `${row} line ${i + 1}` }, lines);
  });
  return lines;
}

function pushLine(files: SourceFiles, text: string, where: Where, lines: TranscriptLine[]): void {
  const before = files.problems.length;
  const event = files.json(text, where, "event:");
  if (isObject(event)) lines.push({ where, event });
  else if (files.problems.length === before)
    files.problems.push({ ...where, reason: "event is not a JSON object" });
  else if (files.problems.at(-1)?.reason === "event: not JSON")
    files.problems.splice(-1, 1, { ...where, reason: "event is not JSON" });
}
