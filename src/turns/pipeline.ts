import type { Compactor } from "../compaction/compactor.js";
import type { CompactionPolicy } from "../compaction/policy.js";
import { runtimeCompactionNote } from "../compaction/runtime-note.js";
import type { AgentDurability } from "../config/engine-config.js";
import {
  assembleContext,
  collectInjected,
  type InjectionHook,
  recordToolCalls,
  redactSecrets,
} from "../context/index.js";
import type { Route } from "../keys/index.js";
import type { CompactionEntry, EntryInput, MessageEntry } from "../model/entry.js";
import type { Envelope } from "../model/envelope.js";
import { isSessiondError, SessiondError } from "../model/errors.js";
import type { Session, SessionInit, StoredContext } from "../model/session.js";
import { sessionNotFound } from "../store/session-log.js";
import type { Durability, Store } from "../store/store.js";
import type { TurnContext, TurnReply, TurnResult, TurnRunner } from "./turn.js";

/** What the pipeline needs to know about an agent for one turn. */
export interface AgentTurnSettings {
  instructions?: string;
  policy: CompactionPolicy;
  contextWindow?: number;
}

/** ZeroClaw's AUTOSAVE_MIN_MESSAGE_CHARS: a user message this long is worth an immediate fsync. */
export const MEANINGFUL_MESSAGE_CHARS = 20;

export interface PipelineDeps {
  store: Store;
  compactor: Compactor;
  settings: (agent: string, session: Session) => AgentTurnSettings;
  durabilityOf: (agent: string) => AgentDurability;
  injectors: readonly InjectionHook[];
  /** Called after a turn's reply is stored (titles, events); must not throw. */
  afterTurn: (key: string, session: Session) => void;
}

/**
 * One turn, run inside the key's lane: store the input (idempotent), compact when due, assemble the
 * context with fresh injected context, run, store the reply with its tool calls recorded safely.
 */
export class TurnPipeline {
  constructor(private readonly deps: PipelineDeps) {}

  async run(route: Route, envelope: Envelope, run: TurnRunner, signal: AbortSignal): Promise<TurnResult> {
    if (signal.aborted) throw cancelled(route.key);
    const { store } = this.deps;
    const { key } = route;
    const durability = this.deps.durabilityOf(route.agent);
    const appended = await store.append(key, [inputEntry(envelope)], initOf(route), {
      durability: inputDurability(durability, envelope.text),
    });
    const input = appended.entries[0] as MessageEntry;
    if (!appended.created[0]) {
      const answered = await this.findReply(input);
      if (answered) return { key, sessionId: input.sessionId, input, reply: answered, deduplicated: true };
    }

    let stored = await this.load(key);
    const settings = this.deps.settings(route.agent, stored.session);
    const compacted = await this.deps.compactor.maybeCompact({
      key,
      context: stored,
      policy: settings.policy,
      ...(settings.contextWindow ? { contextWindow: settings.contextWindow } : {}),
      signal,
    });
    if (compacted) stored = await this.load(key);

    const context = await this.context(route, stored, input, settings, signal);
    let reply: TurnReply;
    try {
      const out = await run(context);
      reply = typeof out === "string" ? { content: out } : out;
      if (signal.aborted) throw cancelled(key);
    } catch (error) {
      await this.recordFailure(key, error);
      if (isSessiondError(error)) throw error;
      throw new SessiondError("TURN_FAILED", `the turn on ${key} failed: ${messageOf(error)}`, {
        cause: error,
      });
    }

    // The reply's commit also makes the turn's earlier relaxed entries durable (one fsync covers the WAL).
    const saved = await store.append(key, replyEntries(route, input, reply), undefined, {
      durability: durability === "relaxed" ? "relaxed" : "strict",
    });
    this.deps.afterTurn(key, saved.session);
    const result: TurnResult = {
      key,
      sessionId: input.sessionId,
      input,
      reply: saved.entries[0] as MessageEntry,
      deduplicated: false,
    };
    if (compacted) result.compaction = compacted.entry as CompactionEntry;
    return result;
  }

  private async context(
    route: Route,
    stored: StoredContext,
    input: MessageEntry,
    settings: AgentTurnSettings,
    signal: AbortSignal,
  ): Promise<TurnContext> {
    const { injected } = await collectInjected(this.deps.injectors, {
      key: route.key,
      agent: route.agent,
      session: stored.session,
      signal,
    });
    const assembled = assembleContext({
      ...(settings.instructions ? { instructions: settings.instructions } : {}),
      ...(stored.summary ? { summary: stored.summary } : {}),
      entries: stored.entries,
      injected,
    });
    const context: TurnContext = {
      key: route.key,
      agent: route.agent,
      session: stored.session,
      entries: stored.entries,
      input,
      messages: assembled.messages,
      tokens: assembled.tokensEstimate,
      signal,
    };
    if (stored.summary) context.summary = stored.summary;
    return context;
  }

  private async load(key: string): Promise<StoredContext> {
    const stored = await this.deps.store.loadContext(key);
    if (!stored) throw sessionNotFound(key);
    return stored;
  }

  private async recordFailure(key: string, error: unknown): Promise<void> {
    const code = isSessiondError(error, "TURN_CANCELLED") ? "TURN_CANCELLED" : "TURN_FAILED";
    const text = `${code}: ${redactSecrets(messageOf(error))}`;
    await this.deps.store.append(key, [{ type: "note", level: "error", code, text }]);
  }

  private async findReply(input: MessageEntry): Promise<MessageEntry | undefined> {
    const later = await this.deps.store.readEntries(input.sessionId, { afterSeq: input.seq });
    return later.find((e): e is MessageEntry => e.type === "message" && e.replyTo === input.id);
  }
}

function inputEntry(envelope: Envelope): EntryInput {
  return {
    type: "message",
    role: "user",
    content: envelope.text,
    sender: envelope.sender,
    ...(envelope.parts ? { parts: envelope.parts } : {}),
    ...(envelope.platformMessageId ? { idempotencyKey: envelope.platformMessageId } : {}),
  };
}

function inputDurability(durability: AgentDurability, text: string): Durability {
  if (durability === "meaningful") return [...text].length >= MEANINGFUL_MESSAGE_CHARS ? "strict" : "relaxed";
  return durability;
}

function initOf(route: Route): SessionInit {
  return { agent: route.agent, channel: route.channel, chatType: route.chatType, createdBy: route.createdBy };
}

function replyEntries(route: Route, input: MessageEntry, reply: TurnReply): EntryInput[] {
  const toolCalls = reply.toolCalls?.length ? recordToolCalls(reply.toolCalls) : [];
  const entries: EntryInput[] = [
    {
      type: "message",
      role: "assistant",
      content: reply.content,
      sender: { id: route.agent },
      replyTo: input.id,
      ...(toolCalls.length ? { toolCalls } : {}),
    },
  ];
  if (reply.usage) entries.push({ type: "usage", ...reply.usage });
  if (reply.runtimeCompaction) entries.push(runtimeCompactionNote(route.agent, reply.runtimeCompaction));
  return entries;
}

function cancelled(key: string): SessiondError {
  return new SessiondError("TURN_CANCELLED", `the turn on ${key} was cancelled`);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
