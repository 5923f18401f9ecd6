import type { Entry } from "../../model/entry.js";
import type { ForkOrigin } from "../../model/session.js";
import type { Store } from "../../store/store.js";

/**
 * Where one run of a runtime that can branch (Claude Code) left its own conversation: the sessiond turn it
 * answered (its input, and the reply once it is known) and the runtime's checkpoint after it. A fork or
 * rewind at seq N resumes at the checkpoint of the newest turn whose reply is at or before N.
 */
export interface TurnMark {
  /** The sessiond session the input was stored in (a branch relabels the marks it keeps). */
  sessionId: string;
  inputSeq: number;
  /** sessiond's input entry id: the reply's `replyTo`. */
  runId: string;
  /** The reply's seq, once a branch has looked it up. */
  replySeq?: number;
  /** The runtime's checkpoint (Claude Code: the transcript uuid). */
  at: string;
}

/** Marks kept per runtime session: older turns are rarely branched from; a branch before them starts fresh. */
export const MAX_TURN_MARKS = 64;
/** How many entries after a run's input its reply is looked for (steers and notes may come between). */
export const REPLY_LOOKAHEAD = 64;

// Kept in the record's `data` under keys of sessiond's own, which runtimes never see.
const MARKS = "sessiond.turns";
const FORK_AT = "sessiond.forkAt";

/** The marks stored with a runtime session, oldest first; none when absent or unreadable. */
export function marksOf(data: Record<string, string> | undefined): TurnMark[] {
  const text = data?.[MARKS];
  if (text === undefined) return [];
  try {
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed.filter(isMark) : [];
  } catch {
    return [];
  }
}

/** The checkpoint the next run branches from, after a fork or rewind; undefined once it has. */
export function forkAtOf(data: Record<string, string> | undefined): string | undefined {
  return data?.[FORK_AT];
}

/** What the runtime itself stored (A2A's task id), without sessiond's keys. */
export function runtimeDataOf(data: Record<string, string> | undefined): Record<string, string> | undefined {
  if (data === undefined || (!(MARKS in data) && !(FORK_AT in data))) return data;
  const { [MARKS]: _m, [FORK_AT]: _f, ...own } = data;
  return Object.keys(own).length > 0 ? own : undefined;
}

/** The record's data: the runtime's own, the newest marks, and a pending branch point. */
export function dataWith(
  own: Record<string, string> | undefined,
  marks: readonly TurnMark[],
  forkAt?: string,
): Record<string, string> | undefined {
  const data: Record<string, string> = { ...own };
  if (marks.length > 0) data[MARKS] = JSON.stringify(marks.slice(-MAX_TURN_MARKS));
  if (forkAt !== undefined) data[FORK_AT] = forkAt;
  return Object.keys(data).length > 0 ? data : undefined;
}

/** The marks with the seqs of their replies found among `entries` (a turn's context) filled in. */
export function withReplySeqs(marks: TurnMark[], entries: readonly Entry[]): TurnMark[] {
  if (marks.every((m) => m.replySeq !== undefined)) return marks;
  const replies = new Map<string, Entry>();
  for (const entry of entries) {
    if (entry.type === "message" && entry.replyTo !== undefined) replies.set(entry.replyTo, entry);
  }
  return marks.map((mark) => {
    const reply = mark.replySeq === undefined ? replies.get(mark.runId) : undefined;
    return reply && reply.sessionId === mark.sessionId ? { ...mark, replySeq: reply.seq } : mark;
  });
}

/** The entries a branch reads to find the replies of marked runs (the engine's store). */
export type ReplyReader = Pick<Store, "readEntries">;

/**
 * The marks a branch at `origin` keeps (their turns answered at or before `origin.seq` in its session), with
 * their reply seqs, relabelled to the session that continues from there; the last of them is where the
 * runtime resumes. Empty when no marked turn ends there: the runtime session cannot follow.
 */
export async function marksUpTo(
  marks: readonly TurnMark[],
  origin: ForkOrigin,
  sessionId: string,
  history: ReplyReader,
): Promise<TurnMark[]> {
  const kept: TurnMark[] = [];
  for (const mark of marks) {
    // Marks already relabelled to `sessionId` count too: following the same branch twice changes nothing.
    const inBranched = mark.sessionId === origin.sessionId || mark.sessionId === sessionId;
    if (!inBranched || mark.inputSeq >= origin.seq) continue;
    const replySeq = mark.replySeq ?? (await replySeqOf(mark, origin, history));
    if (replySeq !== undefined && replySeq <= origin.seq) kept.push({ ...mark, sessionId, replySeq });
  }
  return kept;
}

async function replySeqOf(
  mark: TurnMark,
  origin: ForkOrigin,
  history: ReplyReader,
): Promise<number | undefined> {
  const after = await history.readEntries(origin.sessionId, {
    afterSeq: mark.inputSeq,
    beforeSeq: origin.seq + 1,
    limit: REPLY_LOOKAHEAD,
  });
  return after.find((e) => e.type === "message" && e.replyTo === mark.runId)?.seq;
}

function isMark(value: unknown): value is TurnMark {
  if (typeof value !== "object" || value === null) return false;
  const m = value as Record<string, unknown>;
  return (
    typeof m.sessionId === "string" &&
    typeof m.inputSeq === "number" &&
    typeof m.runId === "string" &&
    typeof m.at === "string" &&
    (m.replySeq === undefined || typeof m.replySeq === "number")
  );
}
