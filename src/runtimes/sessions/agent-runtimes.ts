import type { CostLedger } from "../../ledger/entry.js";
import { MemoryCostLedger } from "../../ledger/memory.js";
import { systemClock } from "../../lifecycle/clock.js";
import { SessiondError } from "../../model/errors.js";
import type { AgentRuntimeSettings, AgentSettings, PermissionMode } from "../agents.js";
import { MemoryDocument } from "../settings-document.js";
import { type BranchOutcome, followBranch, type RuntimeBranch } from "./branch.js";
import type { CostTotals } from "./cost.js";
import { clearedNotice, movedNotice } from "./notices.js";
import type { RuntimeSessionStore } from "./store.js";
import type { ReplyReader } from "./turn-marks.js";
import { emptyWorkSessions, type WorkSession, WorkSessions } from "./work-sessions.js";

/** A runtime session as the API and CLI show it. */
export interface RuntimeSessionView {
  agent: string;
  runtime: string;
  id: string;
  /** The first 8 characters, for the Details panel and `sessions show`. */
  shortId: string;
  savedAt: number;
}

export interface ConversationRuntimeView {
  runtimeSessions: RuntimeSessionView[];
  cost: CostTotals;
  needsAttention: boolean;
  /** Agents that may write without asking here for now (LoCrew's work sessions). */
  workSessions: WorkSession[];
}

export interface AgentView extends AgentRuntimeSettings {
  name: string;
  runtime: NonNullable<AgentRuntimeSettings["runtime"]>;
  cost: CostTotals;
  /** The conversations where it may write without asking for now. */
  workSessions: WorkSession[];
}

export interface AgentChange {
  agent: AgentView;
  /** Runtime sessions cleared by the change (a new working directory clears all of the agent's). */
  cleared: number;
  /** LoCrew's toast, `Agent moved: New working directory. N saved sessions cleared, …`, when any were. */
  notice?: string;
}

export const SHORT_ID_LENGTH = 8;

export { clearedNotice, movedNotice };

/** Records a note entry in a conversation (the engine's append). */
export type NoteWriter = (key: string, text: string) => Promise<void>;

/**
 * Agents and their runtime sessions: settings edits and the one that clears sessions (a new working
 * directory), duplicates without sessions, deletion, and what a conversation shows of its runtimes.
 */
export class AgentRuntimes {
  constructor(
    readonly store: RuntimeSessionStore,
    readonly settings: AgentSettings,
    private readonly note: NoteWriter,
    readonly workSessions: WorkSessions = new WorkSessions(
      new MemoryDocument(emptyWorkSessions()),
      systemClock,
    ),
    /** Every model call's entry (src/ledger): apart from the runtime sessions, never cleared with them. */
    readonly ledger: CostLedger = new MemoryCostLedger(),
  ) {}

  /** Resolves once settings and work sessions changed through another process are read (PostgreSQL). */
  /** Resolves once changes made through another process are read; undefined when none is being read. */
  settled(): Promise<void> | undefined {
    const settings = this.settings.settled();
    const work = this.workSessions.settled();
    if (!settings && !work) return undefined;
    return (async () => {
      await settings;
      await this.workSessions.settled();
    })();
  }

  async list(): Promise<AgentView[]> {
    await this.settled();
    return Promise.all(this.settings.names().map((name) => this.view(name)));
  }

  async get(name: string): Promise<AgentView> {
    await this.settled();
    return this.view(name);
  }

  /** Edits settings. Only a changed `cwd` clears anything: instructions or model edits keep every session. */
  async update(
    name: string,
    patch: Partial<Record<keyof AgentRuntimeSettings, string | null>>,
  ): Promise<AgentChange> {
    const { before, after } = await this.settings.update(name, patch);
    const cleared = before.cwd === after.cwd ? 0 : await this.moved(name, after.cwd);
    return {
      agent: await this.view(name),
      cleared,
      ...(cleared > 0 ? { notice: movedNotice(cleared) } : {}),
    };
  }

  async duplicate(from: string, to: string): Promise<AgentView> {
    await this.settings.duplicate(from, to);
    // A name used before (and deleted) may have left nothing, but make sure the copy starts with no session.
    await this.store.deleteAgent(to);
    await this.store.setLastCwd(to, this.settings.get(to)?.cwd ?? null);
    return this.view(to);
  }

  async delete(name: string): Promise<void> {
    await this.settings.delete(name);
    await this.workSessions.forget({ agent: name });
    await this.store.deleteAgent(name);
  }

  /**
   * At start-up: an agent whose working directory differs from the one it was last seen with (the config
   * file was edited) has its runtime sessions cleared. Returns one notice per agent that had any.
   */
  async reconcile(): Promise<string[]> {
    const notices: string[] = [];
    for (const name of this.settings.names()) {
      const cwd = this.settings.get(name)?.cwd ?? null;
      const last = await this.store.lastCwd(name);
      if (last === undefined) {
        await this.store.setLastCwd(name, cwd);
        continue;
      }
      if (last === cwd) continue;
      const cleared = await this.moved(name, cwd ?? undefined);
      if (cleared > 0) notices.push(`agent ${name}: ${movedNotice(cleared)}`);
    }
    return notices;
  }

  async conversation(key: string): Promise<ConversationRuntimeView> {
    await this.settled();
    const [sessions, cost, marks] = await Promise.all([
      this.store.forKey(key),
      this.store.totals({ key }),
      this.store.attention(key),
    ]);
    return {
      runtimeSessions: sessions.map((s) => ({
        agent: s.agent,
        runtime: s.runtime,
        id: s.id,
        shortId: s.id.slice(0, SHORT_ID_LENGTH),
        savedAt: s.savedAt,
      })),
      cost,
      needsAttention: marks.length > 0,
      workSessions: this.workSessions.list({ key }),
    };
  }

  /**
   * The permission mode a run of `agent` in `key` gets: `auto` during a work session there, else the
   * agent's own (undefined: the runtime's default, which asks).
   */
  permissionFor(agent: string, key: string): PermissionMode | undefined {
    if (this.workSessions.active(agent, key)) return "auto";
    return this.settings.get(agent)?.permission;
  }

  /** Lets an ask-first agent write without asking in one conversation for `minutes`; clears nothing. */
  async startWorkSession(agent: string, key: string, minutes: number): Promise<WorkSession> {
    const settings = this.settings.get(agent);
    if (!settings) throw new SessiondError("AGENT_NOT_FOUND", `no agent named ${JSON.stringify(agent)}`);
    if (settings.permission === "auto") {
      throw new SessiondError(
        "INVALID_ARGUMENT",
        `agent ${agent} already writes without asking (permission auto): a work session is for ask-first agents`,
      );
    }
    return this.workSessions.start(agent, key, minutes);
  }

  /**
   * After the store committed a fork or rewind: each runtime session of the branched key continues on the
   * branch where its runtime can branch (Claude Code), else is cleared there with a note
   * (RUNTIME_SESSIONS_CLEARED). `history` is the session store, read for the replies of marked turns.
   */
  branch(branch: RuntimeBranch, history: ReplyReader): Promise<BranchOutcome> {
    return followBranch(this.store, this.note, branch, history);
  }

  /** Deleting a conversation deletes its runtime sessions, costs, marks and work sessions with it. */
  async forgetConversation(key: string): Promise<void> {
    await this.workSessions.forget({ key });
    await this.store.deleteKey(key);
  }

  private async moved(name: string, cwd: string | undefined): Promise<number> {
    const keys = await this.store.clearAgent(name);
    await this.store.setLastCwd(name, cwd ?? null);
    const notice = movedNotice(keys.length);
    for (const key of keys) await this.note(key, notice);
    return keys.length;
  }

  private async view(name: string): Promise<AgentView> {
    const settings = this.settings.get(name);
    if (!settings) throw new SessiondError("AGENT_NOT_FOUND", `no agent named ${JSON.stringify(name)}`);
    return {
      name,
      ...settings,
      runtime: settings.runtime ?? (settings.model ? "model" : "echo"),
      cost: await this.store.totals({ agent: name }),
      workSessions: this.workSessions.list({ agent: name }),
    };
  }
}
