import type Database from "better-sqlite3";
import { decompress } from "fzstd";
import { isObject } from "../messages.js";
import type { ImportProblem, SourceRead, SourceSession } from "../types.js";
import { openclawChat } from "./openclaw-keys.js";
import { openclawSession } from "./openclaw-session.js";
import { readTranscript, type TranscriptLine } from "./openclaw-transcript.js";
import { columnsOf, hasTable, withDatabase } from "./sqlite-rows.js";

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
  event_zstd: unknown;
  event_utf8_bytes: unknown;
}
interface ArchiveRow {
  session_id: string;
  generation: number;
  encoding: unknown;
  archive_blob: unknown;
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
export function readAgentDatabase(file: string, defaultAgent: string, read: SourceRead): void {
  withDatabase(
    file,
    ["session_nodes", "transcript_events"],
    "an OpenClaw agent database",
    read.problems,
    (db) => {
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
        `SELECT seq, event_json, ${zstd ? "event_zstd, event_utf8_bytes" : "NULL AS event_zstd, NULL AS event_utf8_bytes"} FROM transcript_events WHERE session_id = ? ORDER BY seq`,
      ) as Database.Statement<[string], EventRow>;
      const archives = hasTable(db, "session_transcript_archives")
        ? (db.prepare(
            "SELECT session_id, generation, encoding, archive_blob, archive_name FROM session_transcript_archives WHERE session_key = ? ORDER BY created_at, generation",
          ) as Database.Statement<[string], ArchiveRow>)
        : undefined;
      for (const node of nodes) {
        const entry = parseEntry(node.entry_json, file, node.session_key, read.problems);
        const chat = openclawChat(node.session_key, entry, defaultAgent);
        const chain = windowChain(node, windows?.all(node.session_key) ?? []);
        const archived = archives?.all(node.session_key) ?? [];
        const done = new Set<string>();
        const generations: SourceSession[] = [];
        for (const window of chain) {
          done.add(window.session_id);
          let lines = eventLines(file, window.session_id, events.all(window.session_id), read.problems);
          const archive = archived.find((a) => a.session_id === window.session_id);
          if (lines.length === 0 && archive) lines = archiveLines(file, archive, read.problems);
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
              readTranscript(lines, read.problems),
              !current,
              title,
            ),
          );
        }
        // Archives of windows the chain no longer lists come first: they ended before it began.
        for (const a of archived) {
          if (done.has(a.session_id)) continue;
          const transcript = readTranscript(archiveLines(file, a, read.problems), read.problems);
          if (transcript.items.length > 0)
            read.sessions.push(openclawSession(chat, a.session_id, file, transcript, true, undefined));
        }
        read.sessions.push(...generations);
      }
    },
  );
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

function parseEntry(
  json: unknown,
  file: string,
  key: string,
  problems: ImportProblem[],
): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(String(json));
    if (isObject(value)) return value;
  } catch {
    // reported below
  }
  problems.push({ file, row: `session_nodes ${key}`, reason: "entry_json is not a JSON object" });
  return {};
}

function eventLines(
  file: string,
  sessionId: string,
  rows: EventRow[],
  problems: ImportProblem[],
): TranscriptLine[] {
  const lines: TranscriptLine[] = [];
  for (const row of rows) {
    const where = { file, row: `transcript_events ${sessionId}/${row.seq}` };
    let text: string;
    if (typeof row.event_json === "string") text = row.event_json;
    else if (row.event_zstd instanceof Uint8Array) {
      try {
        const bytes = decompress(row.event_zstd);
        if (typeof row.event_utf8_bytes === "number" && bytes.length !== row.event_utf8_bytes)
          throw new Error(`${bytes.length} bytes where event_utf8_bytes says ${row.event_utf8_bytes}`);
        text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      } catch (error) {
        problems.push({ ...where, reason: `event_zstd does not decode: ${(error as Error).message}` });
        continue;
      }
    } else {
      problems.push({ ...where, reason: "neither event_json nor event_zstd" });
      continue;
    }
    pushLine(text, where, lines, problems);
  }
  return lines;
}

function archiveLines(file: string, archive: ArchiveRow, problems: ImportProblem[]): TranscriptLine[] {
  const row = `session_transcript_archives ${archive.session_id}/${archive.generation}`;
  let text: string;
  try {
    const blob = archive.archive_blob;
    if (!(blob instanceof Uint8Array) && typeof blob !== "string") throw new Error("no archive_blob");
    const bytes =
      typeof blob === "string"
        ? Buffer.from(blob, "utf8")
        : archive.encoding === "zstd"
          ? decompress(blob)
          : blob;
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch (error) {
    problems.push({ file, row, reason: `archive does not decode: ${(error as Error).message}` });
    return [];
  }
  const lines: TranscriptLine[] = [];
  text.split("\n").forEach((line, i) => {
    if (line.trim() !== "") pushLine(line, { file, row: `${row} line ${i + 1}` }, lines, problems);
  });
  return lines;
}

function pushLine(
  text: string,
  where: TranscriptLine["where"],
  lines: TranscriptLine[],
  problems: ImportProblem[],
): void {
  try {
    const event: unknown = JSON.parse(text);
    if (isObject(event)) lines.push({ where, event });
    else problems.push({ ...where, reason: "event is not a JSON object" });
  } catch {
    problems.push({ ...where, reason: "event is not JSON" });
  }
}
