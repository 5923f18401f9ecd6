import type { RuntimeCompaction } from "../compaction/runtime-note.js";
import type { ChatMessage, ReportedToolCall } from "../context/index.js";
import type { CompactionEntry, Entry, MessageEntry, ResetCause } from "../model/entry.js";
import type { RuntimeEvent, RuntimeTools } from "../model/runtime.js";
import type { Session } from "../model/session.js";

/** What a turn's runner gets: the session's context and the input it answers. */
export interface TurnContext {
  key: string;
  agent: string;
  session: Session;
  /** The latest compaction, standing for everything before `entries`. */
  summary?: CompactionEntry;
  /** The kept entries, the input last. */
  entries: Entry[];
  input: MessageEntry;
  /** The context as chat messages: instructions, summary, history with tool recaps, fresh injected context. */
  messages: ChatMessage[];
  /** Estimated tokens of `messages`. */
  tokens: number;
  signal: AbortSignal;
  /** What the runtime has produced so far (runners that drive a runtime report every event here). */
  progress?: TurnProgress;
  /** Messages that arrived for this turn in queue mode `steer`, for runtimes that take them mid-turn. */
  steering?: TurnSteering;
}

/** Steering messages of a running turn: `take` stores the waiting ones as user entries and returns them. */
export interface TurnSteering {
  pending(): boolean;
  take(): Promise<MessageEntry[]>;
  /** Resolves true once a steering message waits, false when `signal` aborts first. */
  wait(signal: AbortSignal): Promise<boolean>;
}

/** A running turn's output so far: the partial reply an interruption keeps, the last event's time. */
export class TurnProgress {
  text = "";
  events = 0;
  lastEventAt: number;

  constructor(private readonly now: () => number) {
    this.lastEventAt = now();
  }

  saw(event: RuntimeEvent): void {
    this.events++;
    this.lastEventAt = this.now();
    if (event.type === "text") this.text += event.delta;
  }
}

export interface TurnReply {
  content: string;
  /** As the runtime reports them; cut and stripped of credentials before they are stored (§7). */
  toolCalls?: ReportedToolCall[];
  usage?: { model?: string; inputTokens?: number; outputTokens?: number; costUsd?: number };
  /** Set when the runtime compacted its own history during the turn (Claude Code does). */
  runtimeCompaction?: RuntimeCompaction;
}

/** Produces the reply for one turn; runtimes come later, any async function will do. */
export type TurnRunner = (context: TurnContext) => Promise<TurnReply | string>;

export interface TurnResult {
  key: string;
  sessionId: string;
  /** The generation of the key that `sessionId` is, when the turn knows it without a read. */
  generation?: number;
  /** Absent when the message was only a reset trigger (`/new`): nothing was stored and nothing ran. */
  input?: MessageEntry;
  reply?: MessageEntry;
  /** Set when the session was reset before this turn: by a trigger, or because a scheduled reset was due. */
  reset?: { cause: ResetCause; previousSessionId: string };
  /** Text for the user when there is no reply (e.g. `Started a new session.`). */
  notice?: string;
  /** True when the input was a redelivery (same platform message id) already answered: nothing ran. */
  deduplicated: boolean;
  /** Set when the context was compacted before this turn ran. */
  compaction?: CompactionEntry;
}

export interface TurnOptions {
  signal?: AbortSignal;
  /**
   * Keep the key's session in this process's memory only: no entry, inbox row, search row, title or
   * runtime session reaches a disk or database, and it is gone at restart. The first turn of a key decides
   * (one that has a stored session fails with KEY_TAKEN); later turns of the key are incognito anyway.
   */
  incognito?: boolean;
}

/** A turn the engine runs on the agent's own runtime (`engine.turn(envelope, options)`). */
export interface AgentTurnOptions extends TurnOptions {
  /** Every runtime event as it arrives (text deltas to stream), after it was recorded. */
  onEvent?: (event: RuntimeEvent) => void | Promise<void>;
  /**
   * Tools the runtime may offer the model. Default: a web chat (`entryPoint.kind: "web_chat"`) gets the
   * admin tools when its sender is listed in `admins` and an empty set (every forged call refused) when
   * not; other entry points get none.
   */
  tools?: RuntimeTools;
}
