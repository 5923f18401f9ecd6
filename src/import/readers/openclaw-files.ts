import { basename, dirname, isAbsolute, join, relative, resolve } from "node:path";
import { readJsonLines } from "../jsonl-lines.js";
import { isObject } from "../messages.js";
import type { SourceFiles } from "../source-files.js";
import type { SourceRead } from "../types.js";
import { openclawChat } from "./openclaw-keys.js";
import { openclawSession } from "./openclaw-session.js";
import { readTranscript, type Transcript } from "./openclaw-transcript.js";

const SESSION_ID = /^[a-z0-9][a-z0-9._-]{0,127}$/i;
const RESET_ARCHIVE = /^(.+)\.jsonl\.reset\.(\d{4}-\d\d-\d\dT\d\d)-(\d\d)-(\d\d(?:\.\d+)?Z)$/;

interface Live {
  rawKey: string;
  entry: Record<string, unknown>;
  transcript: Transcript;
  file: string;
}

/**
 * OpenClaw ≤ 2026.7 (peer-formats §1.4): `sessions.json` (key → SessionEntry) beside the transcripts of
 * one agent's `sessions/` folder. The transcript is `sessionFile` when it is inside the folder, or names a
 * file of an `…/agents/<id>/sessions/` folder (a copied state folder: the same name here), else
 * `<sessionId>.jsonl`. Reset archives (`<id>.jsonl.reset.<stamp>`) are the key's earlier generations.
 * OpenClaw records no key for an archive: it is given to the key whose next transcript (an archive's or
 * the live one) started first at or after the reset, or, with none, kept under `<agent>:openclaw:<id>`.
 */
export function readSessionsJson(
  files: SourceFiles,
  file: string,
  agentId: string,
  defaultAgent: string,
  read: SourceRead,
): void {
  const text = files.text(file);
  if (text === undefined) return;
  const before = read.problems.length;
  // The index is one JSON text, a whole file: its cap is the file's, not a line's.
  const index = files.json(text, { file, line: 1 }, "sessions.json:", files.limits.fileBytes);
  if (read.problems.length > before) {
    if (read.problems.at(-1)?.reason === "sessions.json: not JSON")
      read.problems.splice(-1, 1, {
        file,
        line: 1,
        reason: "sessions.json is not JSON (a zero-byte or torn index)",
      });
    return;
  }
  if (!isObject(index)) {
    read.problems.push({ file, reason: "sessions.json is not an object of sessions" });
    return;
  }
  const dir = dirname(file);
  const live: Live[] = [];
  for (const [rawKey, value] of Object.entries(index)) {
    if (!isObject(value) || typeof value.sessionId !== "string" || !SESSION_ID.test(value.sessionId)) {
      read.problems.push({ file, reason: `entry ${JSON.stringify(rawKey)} has no valid sessionId` });
      continue;
    }
    const transcriptFile = transcriptOf(files, dir, value.sessionId, value.sessionFile);
    // A key with no transcript yet is normal in OpenClaw: nothing to bring in.
    if (!files.exists(transcriptFile)) continue;
    live.push({
      rawKey,
      entry: value,
      transcript: readFileTranscript(files, transcriptFile, read),
      file: transcriptFile,
    });
  }
  for (const name of files.names(dir))
    if (/\.jsonl\.deleted\./.test(name))
      files.leftOut.push({
        file: join(dir, name),
        reason: "the transcript of a session deleted in OpenClaw",
      });
  const liveIds = new Set(live.map((l) => l.transcript.id ?? ""));
  const archives = files
    .names(dir)
    .map((name) => ({ name, match: RESET_ARCHIVE.exec(name) }))
    .filter((a) => a.match !== null)
    .map(({ name, match }) => {
      const path = join(dir, name);
      const transcript = readFileTranscript(files, path, read);
      return { path, transcript, resetAt: Date.parse(`${match?.[2]}:${match?.[3]}:${match?.[4]}`) };
    })
    .filter((a) => !liveIds.has(a.transcript.id ?? ""))
    .sort((a, b) => b.resetAt - a.resetAt);
  // Latest reset first: its successor (live or a later archive) already has its key.
  const keyOf = new Map<Transcript, { rawKey: string; entry: Record<string, unknown> }>();
  for (const l of live) keyOf.set(l.transcript, l);
  const attributed: Array<{
    archive: (typeof archives)[number];
    owner?: { rawKey: string; entry: Record<string, unknown> };
  }> = [];
  for (const archive of archives) {
    const next = [...keyOf.keys()]
      .filter((t) => (t.startedAt ?? -1) >= archive.resetAt - 1000)
      .sort((a, b) => (a.startedAt ?? 0) - (b.startedAt ?? 0))[0];
    const owner = next ? keyOf.get(next) : undefined;
    if (owner) keyOf.set(archive.transcript, owner);
    attributed.push({ archive, ...(owner ? { owner } : {}) });
  }
  for (const { archive, owner } of attributed.reverse()) {
    const id = archive.transcript.id ?? basename(archive.path);
    const rawKey = owner?.rawKey ?? `agent:${agentId}:openclaw:${id}`;
    read.sessions.push(
      openclawSession(
        openclawChat(rawKey, owner?.entry ?? {}, defaultAgent),
        id,
        archive.path,
        archive.transcript,
        true,
        undefined,
      ),
    );
  }
  for (const l of live) {
    const title = [l.entry.label, l.entry.displayName].find(
      (t): t is string => typeof t === "string" && t.trim() !== "",
    );
    read.sessions.push(
      openclawSession(
        openclawChat(l.rawKey, l.entry, defaultAgent),
        l.transcript.id ?? String(l.entry.sessionId),
        l.file,
        l.transcript,
        false,
        title,
      ),
    );
  }
}

function transcriptOf(files: SourceFiles, dir: string, sessionId: string, sessionFile: unknown): string {
  const fallback = join(dir, `${sessionId}.jsonl`);
  if (typeof sessionFile !== "string" || sessionFile === "") return fallback;
  const path = isAbsolute(sessionFile) ? sessionFile : resolve(dir, sessionFile);
  const inside = !relative(dir, path).startsWith("..") && dirname(path) === dir;
  if (inside && files.exists(path)) return path;
  // A state folder copied from elsewhere: the same file name in this agent's sessions folder.
  if (/[/\\]agents[/\\][^/\\]+[/\\]sessions[/\\][^/\\]+$/.test(sessionFile)) {
    const here = join(dir, basename(sessionFile));
    if (files.exists(here)) return here;
  }
  return fallback;
}

function readFileTranscript(files: SourceFiles, file: string, read: SourceRead): Transcript {
  const lines = readJsonLines(files, file).map((l) => ({
    where: { file, line: l.line },
    event: l.value,
  }));
  return readTranscript(lines, read.problems, files.leftOut);
}
