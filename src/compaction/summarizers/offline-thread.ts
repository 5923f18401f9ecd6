/** The offline summariser's thread: summarises each request it is sent and answers with its id. */
import { parentPort } from "node:worker_threads";
import { isSessiondError } from "../../model/errors.js";
import type { SummaryRequest } from "../../model/summarizer.js";
import { summarizeOffline } from "./offline.js";

export interface ThreadRequest {
  id: number;
  request: Omit<SummaryRequest, "signal">;
}

export type ThreadAnswer =
  | { id: number; summary: string }
  | { id: number; error: { code?: string; message: string } };

parentPort?.on("message", ({ id, request }: ThreadRequest) => {
  let answer: ThreadAnswer;
  try {
    answer = { id, summary: summarizeOffline(request) };
  } catch (error) {
    answer = {
      id,
      error: {
        ...(isSessiondError(error) ? { code: error.code } : {}),
        message: error instanceof Error ? error.message : String(error),
      },
    };
  }
  parentPort?.postMessage(answer);
});
