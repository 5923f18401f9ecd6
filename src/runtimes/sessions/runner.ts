import { redactSecrets } from "../../context/index.js";
import type { CostLedger } from "../../ledger/entry.js";
import { RunMeter } from "../../ledger/run-meter.js";
import { isSessiondError } from "../../model/errors.js";
import type { Runtime, RuntimeEvent, RuntimeRun, RuntimeTools } from "../../model/runtime.js";
import { untilDeadline } from "../../turns/deadline.js";
import type { TurnContext, TurnReply, TurnRunner } from "../../turns/turn.js";
import { newActivityPrompt } from "../prompt.js";
import { driveRuntime } from "../runner.js";
import { measureTotal, perRunCost, type RunCost } from "./cost.js";
import type { RuntimeSessionStore } from "./store.js";
import { dataWith, forkAtOf, marksOf, runtimeDataOf, withReplySeqs } from "./turn-marks.js";

export interface SessionRunnerOptions {
  /** Every agent's id, to tell another agent's message from a person's in the prompt. */
  agents: readonly string[];
  /** Every event, after it was recorded (streaming to clients). */
  onEvent?: (event: RuntimeEvent, context: TurnContext) => void | Promise<void>;
  now?: () => number;
  /** Tools the runtime may offer the model this run. */
  tools?: RuntimeTools;
  /** The run's permission mode. */
  permission?: RuntimeRun["permission"];
  /** Where each model call of the run is recorded (src/ledger). */
  ledger?: CostLedger;
}

/**
 * A TurnRunner for a runtime that keeps runtime sessions: resumes the stored one of (agent, key), saves the
 * id the moment the runtime reports it, prices the run (a running total against the baseline, a per-run
 * figure as given, none as unpriced), and marks the agent "needs attention" in that conversation when the
 * run fails — keeping the stored id, so the next run tries to resume it again. A runtime that reports
 * checkpoints (Claude Code) gets its turn marks kept with the id (turn-marks.ts), so that a fork or rewind
 * can branch its session; a run after one branches from the checkpoint saved for it.
 */
export function sessionRunner(
  runtime: Runtime,
  store: RuntimeSessionStore,
  options: SessionRunnerOptions,
): TurnRunner {
  return (context) => runKeepingSession(runtime, store, options, context);
}

/** One run of `runtime` for the turn of `context`, its runtime session resumed and saved (see `sessionRunner`). */
export async function runKeepingSession(
  runtime: Runtime,
  store: RuntimeSessionStore,
  options: SessionRunnerOptions,
  context: TurnContext,
): Promise<TurnReply> {
  const now = options.now ?? Date.now;
  const { agent, key } = context;
  const runId = context.input.id;
  const keeps = runtime.keeps ?? { runtimeSessions: true, costs: true };
  const stored = keeps.runtimeSessions ? await store.get(agent, key) : undefined;
  // Marks of another runtime's session (the agent's runtime was changed) name nothing in this one.
  let marks = stored?.runtime === runtime.kind ? marksOf(stored.data) : [];
  const forkAt = forkAtOf(stored?.data);
  let own = runtimeDataOf(stored?.data);
  let current = stored?.id;
  let reported = false;
  let checkpoint: string | undefined;
  let priced = false;
  const meter = new RunMeter(options.ledger, runtime, { agent, key, sessionId: context.session.id });
  const record = async (cost: RunCost) => {
    priced = true;
    if (cost.status === "priced") meter.cost(cost.usd);
    await store.recordCost({ agent, key, runId, runtime: runtime.kind, at: now(), ...cost });
  };
  const save = (id: string, data: Record<string, string> | undefined) =>
    store.save({ agent, key, runtime: runtime.kind, id, ...(data ? { data } : {}), savedAt: now() });
  const recorded = async (event: Extract<RuntimeEvent, { type: "runtime_session" | "cost" }>) => {
    if (event.type === "runtime_session") {
      // A session neither resumed nor branched from the stored one has none of its turns.
      if (event.id !== stored?.id && forkAt === undefined) marks = [];
      current = event.id;
      own = event.data;
      reported = true;
      // Reported after a branch: the branch is made, its point is no longer pending.
      await save(current, dataWith(own, marks));
    } else if (event.totalUsd !== undefined && current !== undefined) {
      const measured = measureTotal(await store.baseline(agent, key), {
        runId,
        runtimeSessionId: current,
        totalUsd: event.totalUsd,
        // A branch's first total includes what its parent cost before the branch point.
        resumed: stored?.id === current || forkAt !== undefined,
      });
      priced = true;
      if (measured.cost.status === "priced") meter.cost(measured.cost.usd);
      await store.recordCost(
        { agent, key, runId, runtime: runtime.kind, at: now(), ...measured.cost },
        measured.baseline,
      );
    } else if (event.runUsd !== undefined) {
      await record(perRunCost(event.runUsd));
    }
  };
  const drive = driveRuntime(runtime, context, {
    ...(options.tools ? { tools: options.tools } : {}),
    ...(options.permission !== undefined ? { permission: options.permission } : {}),
    runtimeSessionId: () => stored?.id,
    runtimeSessionData: () => runtimeDataOf(stored?.data),
    resumeAt: () => forkAt,
    prompt: (ctx) =>
      newActivityPrompt({
        agent,
        entries: ctx.entries,
        ...(ctx.summary ? { summary: ctx.summary } : {}),
        agents: options.agents,
      }),
    // Only a runtime session or a cost is recorded; every other event goes on without a promise.
    onEvent: (event, ctx) => {
      if (event.type === "checkpoint") checkpoint = event.id;
      if (event.type === "usage") return meter.usage(event).then(() => options.onEvent?.(event, ctx));
      return event.type === "runtime_session" || event.type === "cost"
        ? recorded(event).then(() => options.onEvent?.(event, ctx))
        : options.onEvent?.(event, ctx);
    },
  });
  try {
    // Past the turn's deadline the run fails at once, even if the runtime ignores the abort.
    const reply = await untilDeadline(drive, context.signal);
    if (checkpoint !== undefined && current !== undefined) {
      const { sessionId, seq } = context.input;
      // The earlier runs' replies are in this turn's context: a branch then reads for the newest one alone.
      marks = withReplySeqs(marks, context.entries);
      marks.push({ sessionId, inputSeq: seq, runId, at: checkpoint });
      await save(current, dataWith(own, marks, reported ? undefined : forkAt));
    }
    if (!priced && keeps.costs) await record(perRunCost(undefined));
    await store.setAttention(agent, key, undefined);
    return reply;
  } catch (error) {
    if (!isSessiondError(error, "TURN_CANCELLED")) {
      const message = error instanceof Error ? error.message : String(error);
      await store.setAttention(agent, key, redactSecrets(message), now());
    }
    throw error;
  } finally {
    // Claude Code and Codex report a run once: what they reported is recorded, finished or not.
    await meter.finish();
  }
}
