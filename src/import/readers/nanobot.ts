import { readdirSync } from "node:fs";
import { join } from "node:path";
import { readJsonLines } from "../jsonl-lines.js";
import { isObject, timeOf } from "../messages.js";
import type { SourceFiles } from "../source-files.js";
import type { ImportItem, SourceRead } from "../types.js";
import { emptyRead } from "../types.js";
import { chatItem, keyedSession, keyFromStem, splitKey } from "./chat-lines.js";
import { jsonlNames } from "./dir-files.js";

/**
 * nanobot (peer-formats §4): `sessions/<workspace-id>/<base64url key>.jsonl` (current), or the flat
 * `sessions/<stem>.jsonl` of older releases (base64url, or the lossy `telegram_123`). Line 1
 * `{"_type":"metadata", key, created_at, metadata{title, _last_summary{text,last_active}},
 * last_consolidated}`, an optional `provider_state` line, then chat lines. The summary becomes a compaction
 * after the first `last_consolidated` messages; `_command` turns are kept as notes, out of the context, as
 * nanobot never replays them.
 */
export function readNanobot(files: SourceFiles, path: string, agent: string): SourceRead {
  const read = emptyRead(files.problems, files.leftOut);
  for (const file of sessionFiles(files, path)) readFile(files, file, agent, read);
  return read;
}

/** The session files at `path`: its own `*.jsonl`, those of its 32-hex workspace folders, and of `sessions/`. */
function sessionFiles(source: SourceFiles, path: string, depth = 0): string[] {
  if (!source.isDirectory(path)) return [path];
  const files = jsonlNames(source, path).map((n) => join(path, n));
  if (depth > 1) return files;
  for (const d of readdirSync(path, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const named = /^[0-9a-f]{32}$/.test(d.name) || (d.name === "sessions" && depth === 0);
    if (named && (d.isDirectory() || (d.isSymbolicLink() && source.isDirectory(join(path, d.name)))))
      files.push(...sessionFiles(source, join(path, d.name), depth + 1));
  }
  return files;
}

function readFile(files: SourceFiles, file: string, agent: string, read: SourceRead): void {
  const lines = readJsonLines(files, file);
  const first = lines[0];
  const meta = first?.value._type === "metadata" ? first.value : undefined;
  const stem = file.slice(file.lastIndexOf("/") + 1, -".jsonl".length);
  let key = keyOfStem(stem);
  if (meta && meta.key !== undefined) {
    if (typeof meta.key === "string" && meta.key !== "") key = meta.key;
    else
      read.problems.push({ file, line: 1, reason: "metadata key is not text; the file name's key is used" });
  }
  const info = isObject(meta?.metadata) ? meta.metadata : {};
  const items: ImportItem[] = [];
  let messages = 0;
  const consolidated =
    typeof meta?.last_consolidated === "number" && Number.isInteger(meta.last_consolidated)
      ? meta.last_consolidated
      : 0;
  const body = lines.filter((l) => l.value._type === undefined);
  for (const l of lines)
    if (l.value._type !== undefined && l.value._type !== "metadata")
      read.leftOut?.push({
        file,
        line: l.line,
        reason: `a ${String(l.value._type)} line: the provider's state, not history`,
      });
  const total = body.length;
  const summary = isObject(info._last_summary) ? info._last_summary : undefined;
  const summaryAt = consolidated > 0 && consolidated <= total ? consolidated : 0;
  let summarised = false;
  const pushSummary = () => {
    if (summarised) return;
    summarised = true;
    if (typeof summary?.text !== "string" || summary.text === "") return;
    const ts = timeOf(summary.last_active);
    items.push({ kind: "compaction", summary: summary.text, ...(ts !== undefined ? { ts } : {}) });
  };
  if (summaryAt === 0) pushSummary();
  for (const { line, value } of body) {
    if (messages === summaryAt && summaryAt > 0) pushSummary();
    messages++;
    if (value._command === true) {
      const ts = timeOf(value.timestamp);
      const role = typeof value.role === "string" ? value.role : "?";
      const text = typeof value.content === "string" ? value.content : "";
      items.push({
        kind: "entry",
        entry: {
          type: "note",
          text: `${role}: ${text}`,
          code: "NANOBOT_COMMAND",
          ...(ts !== undefined ? { ts } : {}),
        },
      });
      continue;
    }
    const item = chatItem(file, line, withoutRuntimeContext(value), read.problems);
    if (item) items.push(item);
  }
  pushSummary();
  if (info.title !== undefined) {
    if (typeof info.title === "string" && info.title.trim() !== "") {
      const ts = timeOf(meta?.updated_at);
      items.push({
        kind: "entry",
        entry: {
          type: "title",
          title: info.title.trim().slice(0, 200),
          by: "nanobot",
          ...(ts !== undefined ? { ts } : {}),
        },
      });
    } else if (typeof info.title !== "string")
      read.problems.push({ file, line: 1, reason: "metadata.title is not text; left out" });
  }
  const { channel, id } = splitKey(key);
  const session = keyedSession(key, agent, `nanobot:${key}`, file, items, false, timeOf(meta?.created_at));
  read.sessions.push(
    channel !== "discord" && channel !== "import"
      ? {
          ...session,
          origin: { agent, channel, chatType: "direct", chatId: id, senderId: id },
          ...(channel === "telegram"
            ? {}
            : {
                assumed: [
                  `nanobot records the ${channel} chat id only; a direct chat whose sender id is ${id} is assumed`,
                ],
              }),
        }
      : session,
  );
}

/** `_runtime_context` was appended to the user's text as `"\n\n" + suffix`: the user's own text is what came in. */
function withoutRuntimeContext(value: Record<string, unknown>): Record<string, unknown> {
  const rc = value._runtime_context;
  if (!isObject(rc) || typeof rc.suffix !== "string" || typeof value.content !== "string") return value;
  const tail = `\n\n${rc.suffix}`;
  return value.content.endsWith(tail) ? { ...value, content: value.content.slice(0, -tail.length) } : value;
}

/** A base64url stem that decodes to a `channel:chat` key, else the lossy `channel_chat` form. */
function keyOfStem(stem: string): string {
  if (/^[A-Za-z0-9_-]+$/.test(stem)) {
    const decoded = Buffer.from(stem, "base64url").toString("utf8");
    if (decoded.includes(":") && Buffer.from(decoded, "utf8").toString("base64url") === stem) return decoded;
  }
  return keyFromStem(stem);
}
