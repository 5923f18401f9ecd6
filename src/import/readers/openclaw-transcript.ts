import type { EntryInput } from "../../model/entry.js";
import { isObject, messageEntry, textOf, thinkingPartsOf, timeOf, toolCallPartsOf } from "../messages.js";
import type { ImportItem, ImportProblem } from "../types.js";

export type Where = Omit<ImportProblem, "reason">;
export interface TranscriptLine {
  where: Where;
  event: Record<string, unknown>;
}

export interface Transcript {
  /** The header's `id` (the session id), when there is a header. */
  id?: string;
  /** The header's time. */
  startedAt?: number;
  items: ImportItem[];
  /** The latest `session_info` name. */
  title?: string;
}

/**
 * An OpenClaw transcript (peer-formats §1.4), the same lines in 2026.7 files and 2026.9 rows: the active
 * branch only (from the leaf along `parentId`, as OpenClaw builds its context), so abandoned branches do
 * not merge in. `message` lines become messages (text blocks joined, `toolCall` blocks as tool calls,
 * `thinking` blocks as thinking parts, the message's own `timestamp`), `toolResult` messages tool results
 * linked to their call, `compaction` lines compactions keeping from `firstKeptEntryId`, `session_info`
 * titles; extension messages and branch summaries are kept as notes.
 */
export function readTranscript(
  lines: readonly TranscriptLine[],
  problems: ImportProblem[],
  leftOut: ImportProblem[] = [],
): Transcript {
  const out: Transcript = { items: [] };
  const header = lines.find((l) => l.event.type === "session");
  if (header) {
    if (typeof header.event.id === "string") out.id = header.event.id;
    const started = timeOf(header.event.timestamp);
    if (started !== undefined) out.startedAt = started;
  }
  const itemOfId = new Map<string, number>();
  const active = activeBranch(lines, problems);
  const first = lines[0]?.where;
  if (first && active.length < lines.length)
    leftOut.push({
      ...first,
      reason: `${lines.length - active.length} lines off the active branch (abandoned branches, side entries; OpenClaw does not replay them)`,
    });
  const noHistory = new Map<string, number>();
  for (const { where, event } of active) {
    const ts = timeOf(event.timestamp);
    const at = ts !== undefined ? { ts } : {};
    const push = (item: ImportItem) => {
      if (typeof event.id === "string") itemOfId.set(event.id, out.items.length);
      out.items.push(item);
    };
    const note = (code: string, text: string) =>
      push({ kind: "entry", entry: { type: "note", text, code, ...at } });
    switch (event.type) {
      case "session":
        break;
      case "message": {
        const message = isObject(event.message) ? event.message : undefined;
        if (!message) {
          problems.push({ ...where, reason: "message line without a message" });
          break;
        }
        const entry = messageOf(message, ts);
        if ("entry" in entry) push({ kind: "entry", entry: entry.entry });
        else problems.push({ ...where, reason: entry.error });
        break;
      }
      case "compaction": {
        if (typeof event.summary !== "string") {
          problems.push({ ...where, reason: "compaction without a summary" });
          break;
        }
        const keepFrom =
          typeof event.firstKeptEntryId === "string" ? itemOfId.get(event.firstKeptEntryId) : undefined;
        push({
          kind: "compaction",
          summary: event.summary,
          ...at,
          ...(keepFrom !== undefined ? { keepFrom } : {}),
          ...(typeof event.tokensBefore === "number" && event.tokensBefore >= 0
            ? { tokensBefore: Math.round(event.tokensBefore) }
            : {}),
        });
        break;
      }
      case "session_info":
        if (typeof event.name === "string" && event.name.trim() !== "") {
          out.title = event.name.trim();
          push({
            kind: "entry",
            entry: { type: "title", title: out.title.slice(0, 200), by: "openclaw", ...at },
          });
        }
        break;
      case "custom_message":
        note("OPENCLAW_CUSTOM_MESSAGE", textOf(event.content));
        break;
      case "branch_summary":
        if (typeof event.summary === "string") note("OPENCLAW_BRANCH_SUMMARY", event.summary);
        break;
      default:
        if (typeof event.type !== "string") problems.push({ ...where, reason: "line without a type" });
        else noHistory.set(event.type, (noHistory.get(event.type) ?? 0) + 1);
      // model_change, thinking_level_change, label (a bookmark), custom (extension state), leaf: no history.
    }
  }
  if (first && noHistory.size > 0)
    leftOut.push({
      ...first,
      reason: `no history in ${[...noHistory].map(([type, n]) => `${n} ${type}`).join(", ")} (model and thinking-level changes, bookmarks, extension state)`,
    });
  return out;
}

function messageOf(
  message: Record<string, unknown>,
  lineTs: number | undefined,
): { entry: EntryInput } | { error: string } {
  const ts = timeOf(message.timestamp) ?? lineTs;
  const at = ts !== undefined ? { ts } : {};
  switch (message.role) {
    case "toolResult":
      return messageEntry("toolResult", message.content, {
        ...at,
        toolCallId: message.toolCallId,
        parts: typeof message.toolName === "string" ? [{ kind: "tool", name: message.toolName }] : [],
      });
    case "custom":
    case "hookMessage":
      return { entry: { type: "note", text: textOf(message.content), code: "OPENCLAW_CUSTOM", ...at } };
    case "bashExecution": {
      const command = typeof message.command === "string" ? message.command : "";
      const output = typeof message.output === "string" ? message.output : "";
      return { entry: { type: "note", text: `$ ${command}\n${output}`, code: "OPENCLAW_BASH", ...at } };
    }
    default:
      return messageEntry(message.role, message.content, {
        ...at,
        toolCalls: toolCallPartsOf(message.content),
        parts: thinkingPartsOf(message.content),
      });
  }
}

/**
 * The lines on the active branch, in file order: from the leaf (the last entry not appended `side`, or the
 * target of the last `leaf` control) back along `parentId`. Files without ids or parents (version 1) are
 * one chain.
 * A broken chain (a parent that is not in the file) is reported and the whole file is taken in order.
 */
function activeBranch(
  lines: readonly TranscriptLine[],
  problems: ImportProblem[],
): readonly TranscriptLine[] {
  const body = lines.filter((l) => l.event.type !== "session");
  if (body.some((l) => typeof l.event.id !== "string" || !("parentId" in l.event))) return lines;
  const byId = new Map(body.map((l) => [l.event.id as string, l]));
  let leaf: string | undefined;
  for (const { event } of body) {
    if (event.type === "leaf") {
      if (typeof event.targetId === "string") leaf = event.targetId;
    } else if (event.appendMode !== "side") leaf = event.id as string;
  }
  const onPath = new Set<string>();
  for (let id = leaf; id !== undefined; ) {
    const line = byId.get(id);
    if (!line || onPath.has(id)) {
      problems.push({
        ...(body[0]?.where ?? { file: "" }),
        reason: `the branch's parent ${id} is not in the transcript; every line is taken in order`,
      });
      return lines;
    }
    onPath.add(id);
    const parent = line.event.parentId;
    id = typeof parent === "string" ? parent : undefined;
  }
  return lines.filter((l) => l.event.type === "session" || onPath.has(l.event.id as string));
}
