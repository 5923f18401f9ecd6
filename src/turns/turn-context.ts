import { assembleContext, type InjectedContext } from "../context/index.js";
import type { Route } from "../keys/index.js";
import { parseResetTrigger } from "../lifecycle/triggers.js";
import type { MessageEntry } from "../model/entry.js";
import type { Envelope } from "../model/envelope.js";
import type { StoredContext } from "../model/session.js";
import type { ActorItem, SteerSource } from "./queue-types.js";
import type { TurnContext, TurnSteering } from "./turn.js";
import type { AgentTurnSettings, TurnDeps } from "./turn-deps.js";
import { inputEntry } from "./turn-entries.js";

/** What the runtime gets: the stored context with fresh injected context, assembled when first read. */
export function turnContext(
  route: Route,
  stored: StoredContext,
  input: MessageEntry,
  settings: AgentTurnSettings,
  injected: InjectedContext[],
  signal: AbortSignal,
): TurnContext {
  // Assembled when a runtime first reads it: the echo and the runtimes that keep their own session never do.
  let assembled: ReturnType<typeof assembleContext> | undefined;
  const assemble = () =>
    (assembled ??= assembleContext({
      ...(settings.instructions ? { instructions: settings.instructions } : {}),
      ...(stored.summary ? { summary: stored.summary } : {}),
      entries: stored.entries,
      injected,
      ...(settings.window ? { window: settings.window } : {}),
    }));
  const context: TurnContext = {
    key: route.key,
    agent: route.agent,
    session: stored.session,
    entries: stored.entries,
    input,
    get messages() {
      return assemble().messages;
    },
    get tokens() {
      return assemble().tokensEstimate;
    },
    signal,
  };
  if (stored.summary) context.summary = stored.summary;
  return context;
}

/**
 * The running turn's steer inputs, stored as user entries of its session (after its input, before its
 * reply) when the runtime takes them. A reset trigger or a client's own history never steers: it waits.
 * An input whose inbox write failed is left out (its caller was told).
 */
export function steeringOf(
  deps: Pick<TurnDeps, "store" | "durabilityOf" | "lifecycle">,
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
      const items = await storedOnly(source.take(accept));
      if (items.length === 0) return [];
      const ts = deps.lifecycle.clock.now();
      const durability = deps.durabilityOf(route.agent) === "relaxed" ? "relaxed" : "strict";
      const appended = await deps.store.append(
        route.key,
        items.map((item) => ({ ...inputEntry(item.envelope, item.envelope.text), ts })),
        { durability, expectSessionId: input.sessionId },
      );
      steered.stored += appended.entries.length;
      // A redelivered message is already in the history: the model saw it.
      return appended.entries.filter((_, i) => appended.created[i]) as MessageEntry[];
    },
  };
}

async function storedOnly(items: ActorItem[]): Promise<ActorItem[]> {
  await Promise.all(items.map((item) => item.admission?.written));
  return items.filter((item) => !item.admission?.failed);
}
