import { createHash } from "node:crypto";
import type { EntryInput } from "../model/entry.js";
import { entryText, estimateTokens } from "../model/entry.js";
import { placeByTime } from "./session-times.js";
import type { SourceSession } from "./types.js";

/**
 * A source session as the entries to append, numbered from 1: each carries an idempotency key derived
 * from its source and position (so a second import adds nothing), and each compaction names the seqs it
 * summarises and keeps. A summary with nothing before it (the source dropped what it summarised) gets a
 * note in front saying so, since a compaction must summarise at least one entry.
 */
export function sessionInputs(session: SourceSession, summarizer: string): EntryInput[] {
  const prefix = `import:${createHash("sha256").update(session.sourceId).digest("hex").slice(0, 24)}`;
  const inputs: EntryInput[] = [];
  const seqOfItem: number[] = [];
  let keptFrom = 1;
  const ts = session.createdAt;
  placeByTime(session.items).forEach((item, i) => {
    if (item.kind === "compaction" && inputs.length === 0) {
      inputs.push({
        type: "note",
        text: `The history this summary stands for was not kept by ${summarizer}.`,
        code: "IMPORTED_SUMMARY_ONLY",
        ...(ts !== undefined ? { ts } : {}),
      });
    }
    const seq = inputs.length + 1;
    seqOfItem[i] = seq;
    if (item.kind === "entry") {
      inputs.push({ ...(ts !== undefined ? { ts } : {}), ...item.entry });
      return;
    }
    const kept = item.keepFrom !== undefined && item.keepFrom < i ? (seqOfItem[item.keepFrom] ?? seq) : seq;
    const firstKeptSeq = Math.max(2, kept);
    const throughSeq = firstKeptSeq - 1;
    const fromSeq = Math.min(keptFrom, throughSeq);
    const summarised = inputs.slice(fromSeq - 1, throughSeq);
    inputs.push({
      type: "compaction",
      summary: item.summary,
      fromSeq,
      throughSeq,
      firstKeptSeq,
      tokensBefore: item.tokensBefore ?? summarised.reduce((n, e) => n + estimateTokens(entryText(e)), 0),
      tokensAfter: item.tokensAfter ?? estimateTokens(item.summary),
      summarizer: item.summarizer ?? summarizer,
      ...(item.model !== undefined ? { model: item.model } : {}),
      ...(item.ts !== undefined ? { ts: item.ts } : ts !== undefined ? { ts } : {}),
    });
    keptFrom = firstKeptSeq;
  });
  return inputs.map((input, i) => ({ ...input, idempotencyKey: `${prefix}:${i + 1}` }));
}
