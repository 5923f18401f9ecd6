import { join, resolve } from "node:path";
import type { EngineConfig } from "./config/engine-config.js";
import {
  defaultRoutingConfig,
  initForKey,
  type Route,
  type RoutingConfig,
  routeEnvelope,
  validateKey,
} from "./keys/index.js";
import type { Entry, EntryInput, MessageEntry, ResetCause } from "./model/entry.js";
import type { Envelope } from "./model/envelope.js";
import { isSessiondError, SessiondError } from "./model/errors.js";
import type { Session, SessionInit, StoredContext } from "./model/session.js";
import { openStore } from "./store/open.js";
import { sessionNotFound } from "./store/session-log.js";
import type {
  AppendResult,
  DeleteResult,
  ResetResult,
  SessionPage,
  SessionQuery,
  Store,
} from "./store/store.js";
import { Lanes } from "./turns/lanes.js";
import type { TurnContext, TurnOptions, TurnReply, TurnResult, TurnRunner } from "./turns/turn.js";

export interface HistoryOptions {
  /** At most this many entries: the newest ones. Default: all. */
  limit?: number;
  /** Only entries with a seq below this (in the current session). */
  before?: number;
  /** Also the archived generations before the current one, oldest first. */
  includeArchived?: boolean;
}

export interface Engine {
  readonly store: Store;
  readonly routing: RoutingConfig;
  readonly dataDir: string;
  /** The key and session facts an inbound message routes to. */
  route(envelope: Envelope): Route;
  /** Appends entries to a key's current session, creating it (with `init`, or guessed from the key). */
  append(key: string, entries: EntryInput[], init?: SessionInit): Promise<AppendResult>;
  history(key: string, options?: HistoryOptions): Promise<Entry[]>;
  /** What a turn on this key would see now. */
  context(key: string): Promise<StoredContext | undefined>;
  readonly sessions: {
    list(query?: SessionQuery): Promise<SessionPage>;
    get(key: string): Promise<Session | undefined>;
    generations(key: string): Promise<Session[]>;
  };
  /** Archives the current session and starts a new one; waits for a running turn of that key. */
  reset(key: string, cause?: ResetCause): Promise<ResetResult>;
  /** Deletes every generation of a key; waits for a running turn of that key. */
  delete(key: string): Promise<DeleteResult>;
  /** Runs one turn: routes, stores the input, runs `run` on the context, stores the reply. One per key at a time. */
  turn(envelope: Envelope, run: TurnRunner, options?: TurnOptions): Promise<TurnResult>;
  /** Turns running or waiting, per key. */
  queued(): Map<string, number>;
  /** Waits for running turns, flushes and closes the store. */
  close(): Promise<void>;
}

/** The library's front door: wires the store, routing and lanes from one config. */
export async function createEngine(config: EngineConfig = {}): Promise<Engine> {
  const dataDir = resolve(config.dataDir ?? ".sessiond");
  const routing = routingConfigOf(config);
  const store = isStore(config.store)
    ? config.store
    : await openStore(config.store ?? { backend: "sqlite", path: join(dataDir, "sessiond.db") });
  return new SessionEngine(store, routing, dataDir, new Lanes({ maxQueue: config.maxQueuedTurns ?? 16 }));
}

/** The routing an engine with this config uses; throws INVALID_ARGUMENT for bad values. */
export function routingConfigOf(config: EngineConfig): RoutingConfig {
  return defaultRoutingConfig({
    ...config.routing,
    ...(config.agents ? { agents: config.agents } : {}),
    ...(config.defaultAgent ? { defaultAgent: config.defaultAgent } : {}),
  });
}

function isStore(value: EngineConfig["store"]): value is Store {
  return typeof value === "object" && value !== null && "append" in value;
}

class SessionEngine implements Engine {
  readonly sessions: Engine["sessions"];
  private closing?: Promise<void>;

  constructor(
    readonly store: Store,
    readonly routing: RoutingConfig,
    readonly dataDir: string,
    private readonly lanes: Lanes,
  ) {
    this.sessions = {
      list: (query) => this.store.listSessions(query),
      get: (key) => this.store.getSession(validateKey(key)),
      generations: (key) => this.store.generations(validateKey(key)),
    };
  }

  route(envelope: Envelope): Route {
    return routeEnvelope(envelope, this.routing);
  }

  append(key: string, entries: EntryInput[], init?: SessionInit): Promise<AppendResult> {
    validateKey(key);
    return this.store.append(
      key,
      entries,
      init ?? initForKey(key, this.routing.defaultAgent, this.routing.agents),
    );
  }

  async history(key: string, options: HistoryOptions = {}): Promise<Entry[]> {
    validateKey(key);
    const { limit, before, includeArchived } = options;
    const generations = includeArchived
      ? await this.store.generations(key)
      : [await this.store.getSession(key)].filter((s): s is Session => s !== undefined);
    if (generations.length === 0) throw sessionNotFound(key);
    const pages: Entry[][] = [];
    let remaining = limit ?? Number.POSITIVE_INFINITY;
    for (const [i, session] of generations.entries()) {
      if (remaining <= 0) break;
      const range = {
        order: "desc" as const,
        ...(i === 0 && before !== undefined ? { beforeSeq: before } : {}),
        ...(Number.isFinite(remaining) ? { limit: remaining } : {}),
      };
      const page = await this.store.readEntries(session.id, range);
      remaining -= page.length;
      pages.push(page.reverse());
    }
    return pages.reverse().flat();
  }

  context(key: string): Promise<StoredContext | undefined> {
    return this.store.loadContext(validateKey(key));
  }

  reset(key: string, cause: ResetCause = "manual"): Promise<ResetResult> {
    validateKey(key);
    return this.lanes.run(key, () => this.store.reset(key, cause));
  }

  delete(key: string): Promise<DeleteResult> {
    validateKey(key);
    return this.lanes.run(key, async () => {
      const result = await this.store.delete(key);
      if (result.sessions === 0) throw sessionNotFound(key);
      return result;
    });
  }

  turn(envelope: Envelope, run: TurnRunner, options: TurnOptions = {}): Promise<TurnResult> {
    const route = this.route(envelope);
    const signal = options.signal ?? new AbortController().signal;
    return this.lanes.run(route.key, () => this.runTurn(route, envelope, run, signal));
  }

  queued(): Map<string, number> {
    return this.lanes.active();
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      await this.lanes.drain();
      await this.store.close();
    })();
    return this.closing;
  }

  private async runTurn(
    route: Route,
    envelope: Envelope,
    run: TurnRunner,
    signal: AbortSignal,
  ): Promise<TurnResult> {
    if (signal.aborted) throw cancelled(route.key);
    const { key } = route;
    const input: EntryInput = {
      type: "message",
      role: "user",
      content: envelope.text,
      sender: envelope.sender,
      ...(envelope.parts ? { parts: envelope.parts } : {}),
      ...(envelope.platformMessageId ? { idempotencyKey: envelope.platformMessageId } : {}),
    };
    const init: SessionInit = {
      agent: route.agent,
      channel: route.channel,
      chatType: route.chatType,
      createdBy: route.createdBy,
    };
    const appended = await this.store.append(key, [input], init);
    const inputEntry = appended.entries[0] as MessageEntry;
    if (!appended.created[0]) {
      const answered = await this.findReply(inputEntry);
      if (answered)
        return {
          key,
          sessionId: inputEntry.sessionId,
          input: inputEntry,
          reply: answered,
          deduplicated: true,
        };
    }
    const stored = await this.store.loadContext(key);
    if (!stored) throw sessionNotFound(key);
    const context: TurnContext = {
      key,
      session: stored.session,
      entries: stored.entries,
      input: inputEntry,
      signal,
    };
    if (stored.summary) context.summary = stored.summary;

    let reply: TurnReply;
    try {
      const out = await run(context);
      reply = typeof out === "string" ? { content: out } : out;
      if (signal.aborted) throw cancelled(key);
    } catch (error) {
      const code = isSessiondError(error, "TURN_CANCELLED") ? "TURN_CANCELLED" : "TURN_FAILED";
      const text = error instanceof Error ? error.message : String(error);
      await this.store.append(key, [{ type: "note", level: "error", code, text: `${code}: ${text}` }]);
      if (isSessiondError(error)) throw error;
      throw new SessiondError(code, `the turn on ${key} failed: ${text}`, { cause: error });
    }

    const entries: EntryInput[] = [
      {
        type: "message",
        role: "assistant",
        content: reply.content,
        sender: { id: route.agent },
        replyTo: inputEntry.id,
        ...(reply.toolCalls?.length ? { toolCalls: reply.toolCalls } : {}),
      },
    ];
    if (reply.usage) entries.push({ type: "usage", ...reply.usage });
    const saved = await this.store.append(key, entries);
    return {
      key,
      sessionId: inputEntry.sessionId,
      input: inputEntry,
      reply: saved.entries[0] as MessageEntry,
      deduplicated: false,
    };
  }

  private async findReply(input: MessageEntry): Promise<MessageEntry | undefined> {
    const later = await this.store.readEntries(input.sessionId, { afterSeq: input.seq });
    return later.find((e): e is MessageEntry => e.type === "message" && e.replyTo === input.id);
  }
}

function cancelled(key: string): SessiondError {
  return new SessiondError("TURN_CANCELLED", `the turn on ${key} was cancelled`);
}
