import type { IdentifierSource, SummaryRequest } from "../model/summarizer.js";
import { requiredIdentifiers } from "./identifiers.js";
import { extractIdentifiers, summarizeOffline } from "./summarizers/offline.js";

/** The pure, CPU-heavy steps of a compaction that the compaction thread takes off the event loop. */
export type ThreadWork =
  | { op: "summary"; request: Omit<SummaryRequest, "signal"> }
  | { op: "identifiers"; text: string; max: number; summaryMaxChars: number }
  | {
      op: "summary-keeping";
      request: Omit<SummaryRequest, "signal" | "identifiers">;
      source: IdentifierSource;
    };

/** What a piece of work answers: a summary, identifiers, or both. */
export type WorkValue = string | string[] | { summary: string; identifiers: string[] };

export type ThreadRequest = ThreadWork & { id: number };

export type ThreadAnswer =
  | { id: number; value: WorkValue }
  | { id: number; error: { code?: string; message: string } };

/** The work itself, the same on the thread and in the calling thread. */
export function doWork(work: ThreadWork): WorkValue {
  switch (work.op) {
    case "summary":
      return summarizeOffline(work.request);
    case "identifiers":
      return requiredIdentifiers(work.text, work.max, work.summaryMaxChars);
    case "summary-keeping": {
      const identifiers = requiredIdentifiers(work.source.text, work.source.max, work.request.maxChars);
      // Beyond the required ones, every identifier of the summarised range is kept as room allows.
      const every = extractIdentifiers(work.source.text);
      return { summary: summarizeOffline({ ...work.request, identifiers }, every), identifiers };
    }
  }
}
