import { Worker } from "node:worker_threads";
import { builtModule } from "../config/package-root.js";
import { type ErrorCode, SessiondError } from "../model/errors.js";
import type { Summarizer, SummaryRequest, SummaryResult } from "../model/summarizer.js";
import { OFFLINE_SUMMARIZER_NAME } from "./summarizers/offline.js";
import {
  doWork,
  type ThreadAnswer,
  type ThreadRequest,
  type ThreadWork,
  type WorkValue,
} from "./thread-work.js";

/** The compactor's pure steps: finding the identifiers a summary must keep. */
export interface CompactionWork {
  identifiers(text: string, max: number, summaryMaxChars: number): Promise<string[]>;
}

/** Both steps on the thread, and the offline summariser whose summaries it writes. */
export interface CompactionThread extends CompactionWork {
  readonly offline: Summarizer;
  /** Pieces of work done on the thread, for tests and metrics. */
  readonly threaded: number;
  close(): Promise<void>;
}

interface Waiting {
  work: ThreadWork;
  resolve(value: WorkValue): void;
  reject(error: unknown): void;
}

/** A thread that died this many times is not started again: the work goes on in the calling thread. */
const MAX_DEATHS = 3;

/**
 * A cap on the thread's heap: the work holds one transcript at a time. Work that outgrows it ends the
 * thread, and is then done in the calling thread. (The thread itself costs about 16 MB of RSS either way.)
 */
const THREAD_LIMITS = { maxYoungGenerationSizeMb: 4, maxOldGenerationSizeMb: 96 };

/** The same steps in the calling thread. */
export const inThreadWork: CompactionWork = {
  identifiers: async (text, max, summaryMaxChars) =>
    doWork({ op: "identifiers", text, max, summaryMaxChars }) as string[],
};

/**
 * Compaction's CPU-heavy steps on a thread of their own. Finding identifiers in a 12,000-character
 * transcript and writing its offline summary take a millisecond or more of CPU (several at p99), which on
 * the event loop would stall every request of the gateway; here they run beside them. The answers are the
 * calling thread's answers. The work runs in the calling thread when there is no build to start the thread
 * from (`script` null), or the thread keeps dying.
 */
export function compactionThread(
  script: string | null = builtModule(import.meta.url, "thread-program") ?? null,
): CompactionThread {
  let worker: Worker | undefined;
  let deaths = 0;
  let closed = false;
  let nextId = 0;
  let threaded = 0;
  const waiting = new Map<number, Waiting>();

  const settleHere = (w: Waiting) => {
    try {
      w.resolve(doWork(w.work));
    } catch (error) {
      w.reject(error);
    }
  };

  /** Work the thread took with it is done here. */
  const lost = () => {
    worker = undefined;
    deaths++;
    for (const [id, w] of waiting) {
      waiting.delete(id);
      settleHere(w);
    }
  };

  const start = (path: string): Worker => {
    // None of the parent's flags (`--input-type`, a loader, a profiler): the program is plain built JS.
    const thread = new Worker(path, { resourceLimits: THREAD_LIMITS, execArgv: [] });
    thread.unref();
    thread.on("message", (answer: ThreadAnswer) => {
      const w = waiting.get(answer.id);
      if (!w) return;
      waiting.delete(answer.id);
      if (waiting.size === 0) thread.unref();
      if ("value" in answer) {
        threaded++;
        w.resolve(answer.value);
      } else {
        const code = (answer.error.code ?? "COMPACTION_FAILED") as ErrorCode;
        w.reject(new SessiondError(code, answer.error.message));
      }
    });
    const died = () => {
      if (worker === thread) lost();
    };
    thread.on("error", died);
    thread.on("exit", died);
    return thread;
  };

  const run = (work: ThreadWork, signal?: AbortSignal): Promise<WorkValue> =>
    new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason ?? new Error("aborted"));
      const onAbort = () => {
        waiting.delete(id);
        // Its answer will find no one waiting; an idle thread must not keep the process alive.
        if (waiting.size === 0) worker?.unref();
        reject(signal?.reason ?? new Error("aborted"));
      };
      const done =
        <T>(then: (value: T) => void) =>
        (value: T) => {
          signal?.removeEventListener("abort", onAbort);
          then(value);
        };
      const id = nextId++;
      const w: Waiting = { work, resolve: done(resolve), reject: done(reject) };
      if (script === null || closed || deaths >= MAX_DEATHS) return settleHere(w);
      signal?.addEventListener("abort", onAbort, { once: true });
      waiting.set(id, w);
      worker ??= start(script);
      // Held while work is out, so that awaiting it keeps the process alive.
      worker.ref();
      worker.postMessage({ id, ...work } satisfies ThreadRequest);
    });

  return {
    offline: {
      name: OFFLINE_SUMMARIZER_NAME,
      async summarize({ signal, ...request }: SummaryRequest): Promise<SummaryResult> {
        return { summary: (await run({ op: "summary", request }, signal)) as string };
      },
      // One hand-off instead of two: waking an idle thread cost the event loop 0.07-0.13 ms a message on
      // the 2-vCPU VM where it was measured.
      async summarizeKeeping({ signal, ...request }, source) {
        return (await run({ op: "summary-keeping", request, source }, signal)) as {
          summary: string;
          identifiers: string[];
        };
      },
    },
    async identifiers(text, max, summaryMaxChars) {
      return (await run({ op: "identifiers", text, max, summaryMaxChars })) as string[];
    },
    get threaded() {
      return threaded;
    },
    async close() {
      closed = true;
      const thread = worker;
      worker = undefined;
      if (thread) await thread.terminate();
      for (const [id, w] of waiting) {
        waiting.delete(id);
        w.reject(new SessiondError("STORE_CLOSED", "the compaction thread was closed"));
      }
    },
  };
}
