import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { readJsonLines } from "../jsonl-lines.js";
import { isObject, messageEntry, timeOf, toolCallPartsOf } from "../messages.js";
import type { ImportItem, ImportProblem, SourceRead } from "../types.js";
import { withDatabase } from "./sqlite-rows.js";

/**
 * OpenClaw: `sessions.json` (sessionKey → {sessionId, updatedAt, sessionFile?}) beside its JSONL
 * transcripts (`<sessionId>.jsonl`: a `session` header, `message` lines `{message: {role, content}}`,
 * `compaction` lines `{summary, firstKeptEntryId, tokensBefore}`), found at the path, or under
 * `agents/<agentId>/sessions/`; and ≥ 2026.7.2 one SQLite file per agent, read as tables `sessions`
 * (session_key, session_id, updated_at) and `transcript_events` (session_id, seq, event_json: a transcript
 * line). Keys `agent:<id>:<channel>:direct:<peer>` become sessiond's `<channel>:<peer>` (`<id>:` in front
 * for agents other than main); `group:`/`channel:` markers are dropped the same way; `:thread:<id>` stays.
 */
export function readOpenclaw(path: string): SourceRead {
  const read: SourceRead = { sessions: [], problems: [], toolResultsDropped: 0 };
  for (const file of findFiles(path)) {
    const agent = agentOf(file);
    if (basename(file) === "sessions.json") readIndex(file, agent, read);
    else readDatabase(file, agent, read);
  }
  return read;
}

export function openclawKey(
  raw: string,
  fallbackAgent: string,
): { key: string; agent: string; channel: string; peer: string } {
  const match = /^agent:([^:]+):(.+)$/.exec(raw);
  const agent = match?.[1] ?? fallbackAgent;
  const parts = (match?.[2] ?? raw).split(":");
  const markers = new Set(["direct", "group", "channel", "dm"]);
  if (parts.length > 1 && markers.has(parts[1] ?? "")) parts.splice(1, 1);
  else if (parts.length > 1 && markers.has(parts[0] ?? "")) parts.splice(0, 1);
  const thread = parts.indexOf("thread");
  const head = thread === -1 ? parts : parts.slice(0, thread);
  const key = parts.join(":");
  return {
    key: agent === "main" ? key : `${agent}:${key}`,
    agent,
    channel: head.length > 1 ? (head[0] ?? "openclaw") : "openclaw",
    peer: head.at(-1) ?? key,
  };
}

function findFiles(path: string, depth = 0): string[] {
  const stat = statSync(path);
  if (stat.isFile()) return [path];
  if (depth > 4) return [];
  const out: string[] = [];
  for (const d of readdirSync(path, { withFileTypes: true })) {
    const full = join(path, d.name);
    if (d.isDirectory()) out.push(...findFiles(full, depth + 1));
    else if (d.isFile() && (d.name === "sessions.json" || /\.(sqlite|db)$/.test(d.name))) out.push(full);
  }
  return out.sort();
}

function agentOf(file: string): string {
  const match = /(?:^|[/\\])agents[/\\]([^/\\]+)[/\\]/.exec(file);
  if (match?.[1]) return match[1];
  const db = /^(.+)\.(sqlite|db)$/.exec(basename(file));
  return db?.[1] && db[1] !== "sessions" ? db[1] : "main";
}

function readIndex(file: string, agent: string, read: SourceRead): void {
  let index: unknown;
  try {
    index = JSON.parse(readFileSync(file, "utf8"));
  } catch {
    read.problems.push({ file, line: 1, reason: "sessions.json is not JSON (a zero-byte or torn index)" });
    return;
  }
  if (!isObject(index)) {
    read.problems.push({ file, reason: "sessions.json is not an object of sessions" });
    return;
  }
  const dir = dirname(file);
  for (const [rawKey, value] of Object.entries(index)) {
    if (!isObject(value) || typeof value.sessionId !== "string") {
      read.problems.push({ file, reason: `entry ${JSON.stringify(rawKey)} has no sessionId` });
      continue;
    }
    const transcript = resolve(
      dir,
      typeof value.sessionFile === "string" ? value.sessionFile : `${value.sessionId}.jsonl`,
    );
    if (relative(dir, transcript).startsWith("..")) {
      read.problems.push({
        file,
        reason: `entry ${JSON.stringify(rawKey)} names a transcript outside its directory`,
      });
      continue;
    }
    if (!existsSync(transcript)) {
      read.problems.push({
        file,
        reason: `transcript ${basename(transcript)} of ${JSON.stringify(rawKey)} is missing`,
      });
      continue;
    }
    const lines = readJsonLines(transcript, read.problems).map((l) => ({
      where: { file: transcript, line: l.line },
      event: l.value,
    }));
    addSession(rawKey, agent, value.sessionId, transcript, lines, read);
  }
}

function readDatabase(file: string, agent: string, read: SourceRead): void {
  withDatabase(
    file,
    ["sessions", "transcript_events"],
    "an OpenClaw session database",
    read.problems,
    (db) => {
      const sessions = db
        .prepare("SELECT session_key, session_id FROM sessions ORDER BY session_key")
        .all() as Array<{
        session_key: string;
        session_id: string;
      }>;
      const events = db.prepare(
        "SELECT seq, event_json FROM transcript_events WHERE session_id = ? ORDER BY seq",
      );
      for (const s of sessions) {
        const lines: Array<{ where: Where; event: Record<string, unknown> }> = [];
        for (const row of events.all(s.session_id) as Array<{ seq: number; event_json: unknown }>) {
          const where = { file, row: `transcript_events ${s.session_id}/${row.seq}` };
          try {
            const event: unknown = JSON.parse(String(row.event_json));
            if (isObject(event)) lines.push({ where, event });
            else read.problems.push({ ...where, reason: "event is not a JSON object" });
          } catch {
            read.problems.push({ ...where, reason: "event_json is not JSON" });
          }
        }
        addSession(s.session_key, agent, s.session_id, file, lines, read);
      }
    },
  );
}

type Where = Omit<ImportProblem, "reason">;

function addSession(
  rawKey: string,
  agent: string,
  sessionId: string,
  file: string,
  lines: Array<{ where: Where; event: Record<string, unknown> }>,
  read: SourceRead,
): void {
  const { key, agent: keyAgent, channel, peer } = openclawKey(rawKey, agent);
  const items: ImportItem[] = [];
  const itemOfId = new Map<string, number>();
  let createdAt: number | undefined;
  for (const { where, event } of lines) {
    const ts = timeOf(event.timestamp);
    switch (event.type) {
      case "session":
        createdAt = ts;
        break;
      case "message": {
        const message = isObject(event.message) ? event.message : undefined;
        if (!message) {
          read.problems.push({ ...where, reason: "message line without a message" });
          break;
        }
        const entry = messageEntry(message.role, message.content, {
          ...(ts !== undefined ? { ts } : {}),
          toolCalls: toolCallPartsOf(message.content),
        });
        if ("entry" in entry) {
          if (typeof event.id === "string") itemOfId.set(event.id, items.length);
          items.push({ kind: "entry", entry: entry.entry });
        } else if ("toolResult" in entry) read.toolResultsDropped++;
        else read.problems.push({ ...where, reason: entry.error });
        break;
      }
      case "compaction": {
        if (typeof event.summary !== "string") {
          read.problems.push({ ...where, reason: "compaction without a summary" });
          break;
        }
        const keepFrom =
          typeof event.firstKeptEntryId === "string" ? itemOfId.get(event.firstKeptEntryId) : undefined;
        items.push({
          kind: "compaction",
          summary: event.summary,
          ...(ts !== undefined ? { ts } : {}),
          ...(keepFrom !== undefined ? { keepFrom } : {}),
          ...(typeof event.tokensBefore === "number" ? { tokensBefore: event.tokensBefore } : {}),
        });
        break;
      }
      default:
        if (typeof event.type !== "string") read.problems.push({ ...where, reason: "line without a type" });
      // Model and thinking-level changes and other bookkeeping lines carry no history.
    }
  }
  read.sessions.push({
    key,
    init: { agent: keyAgent, channel, createdBy: peer },
    sourceId: `openclaw:${sessionId}`,
    file,
    items,
    archived: false,
    ...(createdAt !== undefined ? { createdAt } : {}),
  });
}
