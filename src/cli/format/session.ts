import type { Session } from "../../model/session.js";
import { plural } from "./plural.js";
import { oneLine } from "./table.js";
import { formatWhen } from "./time.js";

/** A session's facts as aligned `label  value` lines. */
export function formatFacts(session: Session, now: number): string {
  const overrides = Object.entries(session.overrides).map(([k, v]) => `${k}=${String(v)}`);
  const rows: [string, string][] = [
    ["key", session.key],
    ["session", `${session.id} (generation ${session.generation}, ${session.state})`],
    ["agent", session.agent],
    ["channel", `${session.channel}${session.chatType ? ` (${session.chatType})` : ""}`],
    ["created by", session.createdBy],
    ["title", session.title === "" ? "(none)" : session.title],
    ...(session.forkedFrom ? [["history from", formatOrigin(session)] as [string, string]] : []),
    [
      "entries",
      `${session.entryCount} (${plural(session.messageCount, "message")}, ~${session.approxTokens} tokens)`,
    ],
  ];
  if (session.lastCompactionSeq !== undefined) {
    rows.push(["context from", `#${session.contextFromSeq} (compaction at #${session.lastCompactionSeq})`]);
  }
  rows.push(["created", formatWhen(session.createdAt, now)]);
  rows.push(["last activity", formatWhen(session.lastActivityAt, now)]);
  if (session.archivedAt !== undefined) rows.push(["archived", formatWhen(session.archivedAt, now)]);
  rows.push(["overrides", overrides.length > 0 ? overrides.join(", ") : "(none)"]);
  const width = Math.max(...rows.map(([label]) => label.length));
  return rows.map(([label, value]) => `${label.padEnd(width)}  ${oneLine(value)}\n`).join("");
}

/** One line per generation, oldest first, for `show --all`. */
export function formatGenerationLine(session: Session, now: number): string {
  const end =
    session.archivedAt !== undefined ? `archived ${formatWhen(session.archivedAt, now)}` : session.state;
  return `generation ${session.generation}  ${session.id}  ${plural(session.entryCount, "entry")}  created ${formatWhen(session.createdAt, now)}  ${end}`;
}

/**
 * Where a fork's or a rewound generation's history comes from: `KEY at #SEQ (session ID)`; a rewound
 * generation's origin is its own key's earlier session. Empty when the session has its own history.
 */
export function formatOrigin(session: Session): string {
  const origin = session.forkedFrom;
  if (!origin) return "";
  const where = origin.key === session.key ? "this key" : origin.key;
  return `${where} at #${origin.seq} (session ${origin.sessionId})`;
}
