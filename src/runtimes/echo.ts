import { SessiondError } from "../model/errors.js";
import { ECHO_LABEL, type Runtime, type RuntimeEvent, type RuntimeRun } from "../model/runtime.js";

export { ECHO_LABEL };

/** A runtime that can say in one line what it is, for the gateway's start-up message. */
export interface DescribedRuntime extends Runtime {
  describe(): string;
}

/** The reply echo gives for a run, whole. */
export function echoReply(run: Pick<RuntimeRun, "key" | "input" | "session">): string {
  const { entryCount, approxTokens } = run.session;
  return `${ECHO_LABEL} You said: ${JSON.stringify(run.input)}. Session ${run.key}: ${entryCount} ${
    entryCount === 1 ? "entry" : "entries"
  }, ~${approxTokens} tokens.`;
}

/**
 * The offline default when no model is configured: answers with what it received and the session's facts,
 * so the whole gateway can be tried without an API key. Streams the reply in a few deltas like a model.
 */
export function echoRuntime(): DescribedRuntime {
  return {
    kind: "echo",
    keeps: { runtimeSessions: false, costs: false },
    describe: () => "echo (offline, no model configured: replies with what it received)",
    async *run(run: RuntimeRun): AsyncGenerator<RuntimeEvent, void, undefined> {
      const reply = echoReply(run);
      // Cut after the label and after the quoted input: three deltas, joined back into the reply.
      const afterLabel = ECHO_LABEL.length + 1;
      const afterInput = afterLabel + `You said: ${JSON.stringify(run.input)}. `.length;
      const pieces = [
        reply.slice(0, afterLabel),
        reply.slice(afterLabel, afterInput),
        reply.slice(afterInput),
      ];
      for (const delta of pieces) {
        if (run.signal.aborted) throw cancelled(run.key);
        // A turn of the event loop between deltas, as a network stream would have.
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (run.signal.aborted) throw cancelled(run.key);
        yield { type: "text", delta };
      }
    },
  };
}

function cancelled(key: string): SessiondError {
  return new SessiondError("TURN_CANCELLED", `the turn on ${key} was cancelled`);
}
