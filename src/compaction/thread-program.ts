/** The compaction thread's program: does each piece of work it is sent and answers with its id. */
import { parentPort } from "node:worker_threads";
import { isSessiondError } from "../model/errors.js";
import { doWork, type ThreadAnswer, type ThreadRequest } from "./thread-work.js";

parentPort?.on("message", ({ id, ...work }: ThreadRequest) => {
  let answer: ThreadAnswer;
  try {
    answer = { id, value: doWork(work) };
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
