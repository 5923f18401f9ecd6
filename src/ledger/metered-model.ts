import { AsyncLocalStorage } from "node:async_hooks";
import type { Session } from "../model/session.js";
import type { Completion, CompletionRequest, TextModel } from "../model/text-model.js";
import type { CallKind, CostLedger } from "./entry.js";
import type { ModelPrice } from "./price.js";
import { recordCall, usageOf } from "./record.js";

/** What a text model call is for: the session it serves and why (compaction, title). */
interface CallScope {
  agent: string;
  sessionId: string;
  key: string;
  kind: CallKind;
}

const scopes = new AsyncLocalStorage<CallScope>();

/** Runs `fn` with its model calls recorded as `kind` calls for `session`. */
export function forSession<T>(session: Session, kind: "compaction" | "title", fn: () => T): T {
  return scopes.run({ agent: session.agent, sessionId: session.id, key: session.key, kind }, fn);
}

/** Where metered models write, once the engine has opened it (nothing is written before). */
export interface LedgerSlot {
  ledger?: CostLedger;
}

/**
 * A text model whose every answered call is a ledger entry: for the session and purpose of the call's scope
 * (`forSession`), else kind `summary` with no session (a call made outside a session's work).
 */
export function meteredModel(model: TextModel, price: ModelPrice | undefined, slot: LedgerSlot): TextModel {
  const shape = model.provider === "anthropic" ? "anthropic" : "openai";
  return {
    provider: model.provider,
    model: model.model,
    ...(model.contextWindow !== undefined ? { contextWindow: model.contextWindow } : {}),
    async complete(request: CompletionRequest): Promise<Completion> {
      const completion = await model.complete(request);
      const scope = scopes.getStore() ?? { agent: "", sessionId: "", key: "", kind: "summary" };
      await recordCall(
        slot.ledger,
        { ...scope, model: completion.model || model.model },
        shape,
        usageOf(completion),
        price,
      );
      return completion;
    },
  };
}
