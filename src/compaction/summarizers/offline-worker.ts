import { Worker } from "node:worker_threads";
import { builtModule } from "../../config/package-root.js";
import { type ErrorCode, SessiondError } from "../../model/errors.js";
import type { Summarizer, SummaryRequest, SummaryResult } from "../../model/summarizer.js";
import { OFFLINE_SUMMARIZER_NAME, summarizeOffline } from "./offline.js";
import type { ThreadAnswer, ThreadRequest } from "./offline-thread.js";

export interface ThreadedSummarizer extends Summarizer {
  /** Summaries made on the thread, for tests and metrics. */
  readonly threaded: number;
  close(): Promise<void>;
}

interface Waiting {
  request: SummaryRequest;
  resolve(result: SummaryResult): void;
  reject(error: unknown): void;
}

/** A thread that died this many times is not started again: summaries go on in the calling thread. */
const MAX_DEATHS = 3;

/**
 * The offline summariser on a thread of its own. A summary of a 12,000-character transcript takes about a
 * millisecond of CPU (several at p99), which on the event loop would stall every request of the gateway;
 * here it runs beside them. The summary is the same as `offlineSummarizer`'s. It runs in the calling
 * thread when there is no build to start the thread from, or the thread keeps dying.
 */
export function offlineThreadSummarizer(
  /** The thread's program; null: none, summarise in the calling thread. */
  script: string | null = builtModule(import.meta.url, "offline-thread") ?? null,
): ThreadedSummarizer {
  let worker: Worker | undefined;
  let deaths = 0;
  let closed = false;
  let nextId = 0;
  let threaded = 0;
  const waiting = new Map<number, Waiting>();

  const inThread = (request: SummaryRequest): SummaryResult => ({ summary: summarizeOffline(request) });

  /** Requests the thread took with it are summarised here. */
  const lost = () => {
    worker = undefined;
    deaths++;
    for (const [id, w] of waiting) {
      waiting.delete(id);
      try {
        w.resolve(inThread(w.request));
      } catch (error) {
        w.reject(error);
      }
    }
  };

  const start = (path: string): Worker => {
    const thread = new Worker(path);
    thread.unref();
    thread.on("message", ({ id, ...answer }: ThreadAnswer) => {
      const w = waiting.get(id);
      if (!w) return;
      waiting.delete(id);
      if (waiting.size === 0) thread.unref();
      if ("summary" in answer) {
        threaded++;
        w.resolve({ summary: answer.summary });
      } else {
        w.reject(
          new SessiondError((answer.error.code ?? "COMPACTION_FAILED") as ErrorCode, answer.error.message),
        );
      }
    });
    thread.on("error", () => {
      if (worker === thread) lost();
    });
    thread.on("exit", () => {
      if (worker === thread) lost();
    });
    return thread;
  };

  return {
    name: OFFLINE_SUMMARIZER_NAME,
    get threaded() {
      return threaded;
    },
    summarize(request: SummaryRequest): Promise<SummaryResult> {
      const { signal, ...plain } = request;
      if (signal?.aborted) return Promise.reject(signal.reason ?? new Error("aborted"));
      if (script === null || closed || deaths >= MAX_DEATHS) {
        try {
          return Promise.resolve(inThread(request));
        } catch (error) {
          return Promise.reject(error);
        }
      }
      worker ??= start(script);
      // Held while a summary is out, so that awaiting it keeps the process alive.
      worker.ref();
      const id = nextId++;
      const message: ThreadRequest = { id, request: plain };
      return new Promise<SummaryResult>((resolve, reject) => {
        const onAbort = () => {
          waiting.delete(id);
          reject(signal?.reason ?? new Error("aborted"));
        };
        signal?.addEventListener("abort", onAbort, { once: true });
        const settle =
          <T>(then: (value: T) => void) =>
          (value: T) => {
            signal?.removeEventListener("abort", onAbort);
            then(value);
          };
        waiting.set(id, { request, resolve: settle(resolve), reject: settle(reject) });
        worker?.postMessage(message);
      });
    },
    async close() {
      closed = true;
      const thread = worker;
      worker = undefined;
      if (thread) await thread.terminate();
      for (const [id, w] of waiting) {
        waiting.delete(id);
        w.reject(new SessiondError("STORE_CLOSED", "the summariser was closed"));
      }
    },
  };
}
