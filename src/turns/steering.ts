import type { Route } from "../keys/index.js";
import { parseResetTrigger } from "../lifecycle/triggers.js";
import type { MessageEntry } from "../model/entry.js";
import type { Envelope } from "../model/envelope.js";
import type { PipelineDeps } from "./pipeline.js";
import type { TurnSteering } from "./turn.js";
import { inputEntry } from "./turn-entries.js";

/** Where a running turn's steer inputs come from (the key's queue); `accept` says which may steer. */
export interface SteerSource {
  pending(accept: (envelope: Envelope) => boolean): boolean;
  take(accept: (envelope: Envelope) => boolean): Promise<Envelope[]>;
  wait(accept: (envelope: Envelope) => boolean, signal: AbortSignal): Promise<boolean>;
}

export type SteeringDeps = Pick<PipelineDeps, "store" | "durabilityOf"> & {
  lifecycle: Pick<PipelineDeps["lifecycle"], "resetTriggers" | "clock">;
};

/**
 * The running turn's steer inputs, stored as user entries of its session (after its input, before its
 * reply) when the runtime takes them. A reset trigger or a client's own history never steers: it waits.
 */
export function steeringOf(
  deps: SteeringDeps,
  route: Route,
  input: MessageEntry,
  source: SteerSource,
  steered: { stored: number },
): TurnSteering {
  const accept = (envelope: Envelope) =>
    envelope.clientHistory === undefined &&
    parseResetTrigger(envelope.text, deps.lifecycle.resetTriggers) === undefined;
  return {
    pending: () => source.pending(accept),
    wait: (signal) => source.wait(accept, signal),
    take: async () => {
      const envelopes = await source.take(accept);
      if (envelopes.length === 0) return [];
      const ts = deps.lifecycle.clock.now();
      const durability = deps.durabilityOf(route.agent) === "relaxed" ? "relaxed" : "strict";
      const appended = await deps.store.append(
        route.key,
        envelopes.map((envelope) => ({ ...inputEntry(envelope, envelope.text), ts })),
        { durability, expectSessionId: input.sessionId },
      );
      steered.stored += appended.entries.length;
      // A redelivered message is already in the history: the model saw it.
      return appended.entries.filter((_, i) => appended.created[i]) as MessageEntry[];
    },
  };
}
