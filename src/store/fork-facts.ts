import type { Entry } from "../model/entry.js";
import { entryText, estimateTokens } from "../model/entry.js";
import { SessiondError } from "../model/errors.js";
import type { Session } from "../model/session.js";
import type { Lineage } from "./lineage.js";

/** What a session made of the first `seq` entries of another knows of them without reading them again. */
export interface PrefixFacts {
  seq: number;
  messageCount: number;
  approxTokens: number;
  contextFromSeq: number;
  lastCompactionSeq?: number;
}

const PAGE = 1_000;

/**
 * The facts of `source`'s entries 1..`seq`. At its head they are the session's own (no read); below it the
 * shorter side is read (the entries after `seq`, subtracted, or those up to it, counted), a page at a time,
 * and the compaction in force at `seq` is looked for from `seq` down when a later one replaced it.
 */
export async function prefixFacts(lineage: Lineage, source: Session, seq: number): Promise<PrefixFacts> {
  if (!Number.isSafeInteger(seq) || seq < 0 || seq > source.entryCount)
    throw new SessiondError(
      "INVALID_ARGUMENT",
      `seq ${seq} is not an entry of session ${source.id} (it has entries 1..${source.entryCount}; 0 forks none)`,
      { details: { seq, entryCount: source.entryCount } },
    );
  const compactionHolds = source.lastCompactionSeq === undefined || source.lastCompactionSeq <= seq;
  const facts: PrefixFacts = {
    seq,
    messageCount: source.messageCount,
    approxTokens: source.approxTokens,
    contextFromSeq: source.contextFromSeq,
    ...(source.lastCompactionSeq === undefined ? {} : { lastCompactionSeq: source.lastCompactionSeq }),
  };
  if (seq === source.entryCount) return facts;
  if (source.entryCount - seq <= seq) {
    await eachPage(lineage, source, seq, source.entryCount + 1, (entry) => {
      if (entry.type !== "message") return;
      facts.messageCount -= 1;
      facts.approxTokens -= estimateTokens(entryText(entry));
    });
  } else {
    facts.messageCount = 0;
    facts.approxTokens = 0;
    await eachPage(lineage, source, 0, seq + 1, (entry) => {
      if (entry.type !== "message") return;
      facts.messageCount += 1;
      facts.approxTokens += estimateTokens(entryText(entry));
    });
  }
  if (!compactionHolds) {
    const compaction = await lastCompaction(lineage, source, seq);
    delete facts.lastCompactionSeq;
    facts.contextFromSeq = 1;
    if (compaction?.type === "compaction") {
      facts.lastCompactionSeq = compaction.seq;
      facts.contextFromSeq = compaction.firstKeptSeq;
    }
  }
  return facts;
}

async function eachPage(
  lineage: Lineage,
  session: Session,
  afterSeq: number,
  beforeSeq: number,
  visit: (entry: Entry) => void,
): Promise<void> {
  let after = afterSeq;
  while (after + 1 < beforeSeq) {
    const page = await lineage.readEntries(session, {
      afterSeq: after,
      beforeSeq,
      limit: PAGE,
      order: "asc",
    });
    if (page.length === 0) return;
    for (const entry of page) visit(entry);
    after = page.at(-1)!.seq;
  }
}

async function lastCompaction(lineage: Lineage, session: Session, seq: number): Promise<Entry | undefined> {
  let before = seq + 1;
  while (before > 1) {
    const page = await lineage.readEntries(session, { beforeSeq: before, limit: PAGE, order: "desc" });
    if (page.length === 0) return undefined;
    const found = page.find((entry) => entry.type === "compaction");
    if (found) return found;
    before = page.at(-1)!.seq;
  }
  return undefined;
}
