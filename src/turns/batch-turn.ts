import type { Envelope } from "../model/envelope.js";
import type { SessionEvents } from "./events.js";
import type { Lanes } from "./lanes.js";
import type { TurnPipeline } from "./pipeline.js";
import type { TurnResult } from "./turn.js";
import type { Batch } from "./turn-queue.js";

export interface BatchTurnDeps {
  lanes: Lanes;
  events: SessionEvents;
  pipeline: TurnPipeline;
  admitted: {
    /** Resolves once the batch's inputs are admitted (their inbox rows written). */
    ready(key: string, ids: readonly string[]): Promise<void>;
    /** Which of these steered inputs are still the turn's to take (not cancelled meanwhile). */
    joined(ids: readonly string[]): Promise<boolean[]>;
  };
}

/**
 * One batch of the queue as one turn, in the key's lane: coalesced inputs stored first, then the turn;
 * the result settles with the reply, and the compaction it calls for runs after it, still in the lane.
 */
export function runBatch(deps: BatchTurnDeps, batch: Batch): Promise<TurnResult> {
  const { lanes, events, pipeline, admitted } = deps;
  const { route } = batch;
  const { key, agent } = route;
  let replied!: (result: TurnResult) => void;
  const reply = new Promise<TurnResult>((resolve) => {
    replied = resolve;
  });
  const lane = lanes.run(key, async () => {
    events.emit({ type: "turn.started", key, agent });
    let result: TurnResult;
    try {
      await admitted.ready(key, batch.ids);
      if (batch.summary !== undefined) {
        await pipeline.record(route, { ...withoutMessageId(batch.input), text: batch.summary });
      }
      for (const earlier of batch.context) await pipeline.record(route, earlier);
      const steering = {
        pending: batch.steering.pending,
        wait: batch.steering.wait,
        take: async (accept: (envelope: Envelope) => boolean) => {
          const taken = batch.steering.take(accept);
          if (taken.length === 0) return [];
          const stored = await admitted.joined(taken.map((input) => input.id));
          return taken.filter((_, i) => stored[i]).map((input) => input.envelope);
        },
      };
      result = await pipeline.run(route, batch.input, batch.run, batch.signal, steering);
      events.emit({ type: "turn.finished", key, agent, ok: true });
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      events.emit({ type: "turn.finished", key, agent, ok: false, error: message });
      throw error;
    }
    replied(result);
    // The reply is out; still in the lane, so the next turn on the key runs on the compacted context.
    await pipeline.compactAfter(route, result);
  });
  return Promise.race([reply, lane.then(() => reply)]);
}

function withoutMessageId(envelope: Envelope): Envelope {
  const { platformMessageId: _id, ...rest } = envelope;
  return rest;
}
