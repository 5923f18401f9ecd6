import { readdirSync } from "node:fs";
import { basename, join } from "node:path";
import type { SourceFiles } from "../source-files.js";
import type { SourceRead } from "../types.js";
import { emptyRead } from "../types.js";
import { readSessionsJson } from "./openclaw-files.js";
import { readAgentDatabase } from "./openclaw-sqlite.js";

/**
 * OpenClaw's state folder, one agent's folder, or one file: 2026.7 and earlier keep
 * `agents/<id>/sessions/sessions.json` and JSONL transcripts; 2026.9 one SQLite database per agent,
 * `agents/<id>/agent/openclaw-agent.sqlite`. Both are read; the global `state/*.sqlite` files hold no
 * transcripts and are skipped.
 */
export function readOpenclaw(files: SourceFiles, path: string, defaultAgent: string): SourceRead {
  const read = emptyRead(files.problems, files.leftOut);
  for (const file of findFiles(files, path)) {
    const agent = agentOf(file);
    if (basename(file) === "sessions.json") readSessionsJson(files, file, agent, defaultAgent, read);
    else readAgentDatabase(files, file, defaultAgent, read);
  }
  return read;
}

/** Folders are walked without following symlinks; a named file of another kind is refused when read. */
function findFiles(files: SourceFiles, path: string, depth = 0): string[] {
  if (!files.isDirectory(path)) return [path];
  if (depth > 4) return [];
  const out: string[] = [];
  for (const d of readdirSync(path, { withFileTypes: true })) {
    const full = join(path, d.name);
    const folder = d.isDirectory() || (d.isSymbolicLink() && files.isDirectory(full));
    if (folder && !(depth === 0 && d.name === "state")) out.push(...findFiles(files, full, depth + 1));
    else if (!folder && (d.name === "sessions.json" || d.name === "openclaw-agent.sqlite")) out.push(full);
  }
  return out.sort();
}

/** The agent a file belongs to: the `agents/<id>/` folder it is in, else OpenClaw's default `main`. */
function agentOf(file: string): string {
  return /(?:^|[/\\])agents[/\\]([^/\\]+)[/\\]/.exec(file)?.[1] ?? "main";
}
