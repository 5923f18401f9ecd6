import type { Clock } from "../../lifecycle/clock.js";
import { SessiondError } from "../../model/errors.js";
import { MAX_WORK_SESSION_MINUTES, type WorkSession } from "../../model/work-session.js";
import { lazySchema } from "../../model/zod.js";
import type { SettingsDocument } from "../settings-document.js";

export const WORK_SESSIONS_FILE = "work-sessions.json";
export type { WorkSession };

export const workSessionsSchema = lazySchema((z) =>
  z.strictObject({
    workSessions: z.array(
      z.strictObject({
        agent: z.string().min(1),
        key: z.string().min(1),
        startedAt: z.number(),
        until: z.number(),
      }),
    ),
  }),
);
export type WorkSessionsDocument = { workSessions: WorkSession[] };

export const emptyWorkSessions = (): WorkSessionsDocument => ({ workSessions: [] });

/**
 * Work sessions, a settings document: `work-sessions.json` beside the runtime sessions (replaced atomically,
 * so they survive a restart, and read again when another process — the CLI beside a running gateway —
 * replaced it), a row of the PostgreSQL database every gateway shares, or memory. Expiry is read from the
 * engine's clock at each question: one that has run out ends without a timer or a restart, and is dropped
 * at the next change.
 */
export class WorkSessions {
  constructor(
    private readonly document: SettingsDocument<WorkSessionsDocument>,
    private readonly clock: Clock,
  ) {}

  /** Grants (or extends) a work session of `minutes` from now. */
  async start(agent: string, key: string, minutes: number): Promise<WorkSession> {
    if (!Number.isInteger(minutes) || minutes < 1 || minutes > MAX_WORK_SESSION_MINUTES) {
      throw new SessiondError(
        "INVALID_ARGUMENT",
        `a work session lasts 1 to ${MAX_WORK_SESSION_MINUTES} minutes, not ${minutes}`,
      );
    }
    const now = this.clock.now();
    const grant = { agent, key, startedAt: now, until: now + minutes * 60_000 };
    await this.document.change(({ workSessions }) => ({
      workSessions: [...live(workSessions, now).filter((g) => g.agent !== agent || g.key !== key), grant],
    }));
    return grant;
  }

  /** Ends it now; whether one was running. */
  async end(agent: string, key: string): Promise<boolean> {
    const now = this.clock.now();
    let running = false;
    await this.document.change(({ workSessions }) => {
      running = workSessions.some((g) => g.agent === agent && g.key === key && now < g.until);
      return { workSessions: live(workSessions, now).filter((g) => g.agent !== agent || g.key !== key) };
    });
    return running;
  }

  active(agent: string, key: string): WorkSession | undefined {
    const now = this.clock.now();
    return this.grants().find((g) => g.agent === agent && g.key === key && now < g.until);
  }

  /** The running work sessions of an agent, or of a conversation. */
  list(filter: { agent?: string; key?: string }): WorkSession[] {
    return live(this.grants(), this.clock.now()).filter((g) => matches(g, filter));
  }

  /** Forgets an agent's (deleted) or a conversation's (deleted) work sessions. */
  async forget(filter: { agent?: string; key?: string }): Promise<void> {
    if (!this.grants().some((g) => matches(g, filter))) return;
    await this.document.change(({ workSessions }) => ({
      workSessions: workSessions.filter((g) => !matches(g, filter)),
    }));
  }

  /** Resolves once a change made through another process is read. */
  settled(): Promise<void> | undefined {
    return this.document.settled();
  }

  private grants(): WorkSession[] {
    return this.document.current().workSessions;
  }
}

function live(grants: WorkSession[], now: number): WorkSession[] {
  return grants.filter((g) => now < g.until);
}

function matches(g: WorkSession, filter: { agent?: string; key?: string }): boolean {
  return (
    (filter.agent === undefined || g.agent === filter.agent) &&
    (filter.key === undefined || g.key === filter.key)
  );
}
