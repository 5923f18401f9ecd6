import type { SummaryRequest } from "../model/summarizer.js";
import { requiredIdentifiers } from "./identifiers.js";
import { summarizeOffline } from "./summarizers/offline.js";

/** The pure, CPU-heavy steps of a compaction that the compaction thread takes off the event loop. */
export type ThreadWork =
  | { op: "summary"; request: Omit<SummaryRequest, "signal"> }
  | { op: "identifiers"; text: string; max: number; summaryMaxChars: number };

export type ThreadRequest = ThreadWork & { id: number };

export type ThreadAnswer =
  | { id: number; value: string | string[] }
  | { id: number; error: { code?: string; message: string } };

/** The work itself, the same on the thread and in the calling thread. */
export function doWork(work: ThreadWork): string | string[] {
  return work.op === "summary"
    ? summarizeOffline(work.request)
    : requiredIdentifiers(work.text, work.max, work.summaryMaxChars);
}
