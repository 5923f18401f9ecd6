import { statSync } from "node:fs";
import type { Clock } from "../../lifecycle/clock.js";
import { SessiondError } from "../../model/errors.js";
import { MAX_WORK_SESSION_MINUTES, type WorkSession } from "../../model/work-session.js";
import { lazySchema } from "../../model/zod.js";
import { readJsonFile, writeJsonFile } from "../json-file.js";

export const WORK_SESSIONS_FILE = "work-sessions.json";
export type { WorkSession };

const fileSchema = lazySchema((z) =>
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

/**
 * Work sessions, kept in `work-sessions.json` beside the runtime sessions (replaced atomically, so they
 * survive a restart), or in memory. Expiry is read from the engine's clock at each question: one that has
 * run out ends without a timer or a restart, and is dropped at the next write. The file is read again
 * when another process (the CLI beside a running gateway) replaced it.
 */
export class WorkSessions {
  private grants: WorkSession[] = [];
  private version = "";

  constructor(
    private readonly path: string | undefined,
    private readonly clock: Clock,
  ) {
    this.refresh();
  }

  private refresh(): void {
    if (this.path === undefined) return;
    const stat = statSync(this.path, { throwIfNoEntry: false });
    const version = stat ? `${stat.ino}:${stat.mtimeMs}:${stat.size}` : "";
    if (version === this.version) return;
    this.grants = stat ? readJsonFile(this.path, fileSchema()).workSessions : [];
    this.version = version;
  }

  /** Grants (or extends) a work session of `minutes` from now. */
  start(agent: string, key: string, minutes: number): WorkSession {
    if (!Number.isInteger(minutes) || minutes < 1 || minutes > MAX_WORK_SESSION_MINUTES) {
      throw new SessiondError(
        "INVALID_ARGUMENT",
        `a work session lasts 1 to ${MAX_WORK_SESSION_MINUTES} minutes, not ${minutes}`,
      );
    }
    this.refresh();
    const now = this.clock.now();
    const grant = { agent, key, startedAt: now, until: now + minutes * 60_000 };
    this.grants = [...this.live(now).filter((g) => g.agent !== agent || g.key !== key), grant];
    this.save();
    return grant;
  }

  /** Ends it now; whether one was running. */
  end(agent: string, key: string): boolean {
    this.refresh();
    const now = this.clock.now();
    const running = this.active(agent, key) !== undefined;
    this.grants = this.live(now).filter((g) => g.agent !== agent || g.key !== key);
    this.save();
    return running;
  }

  active(agent: string, key: string): WorkSession | undefined {
    this.refresh();
    const now = this.clock.now();
    return this.grants.find((g) => g.agent === agent && g.key === key && now < g.until);
  }

  /** The running work sessions of an agent, or of a conversation. */
  list(filter: { agent?: string; key?: string }): WorkSession[] {
    this.refresh();
    return this.live(this.clock.now()).filter(
      (g) =>
        (filter.agent === undefined || g.agent === filter.agent) &&
        (filter.key === undefined || g.key === filter.key),
    );
  }

  /** Forgets an agent's (deleted) or a conversation's (deleted) work sessions. */
  forget(filter: { agent?: string; key?: string }): void {
    this.refresh();
    const before = this.grants.length;
    this.grants = this.grants.filter(
      (g) =>
        !(
          (filter.agent === undefined || g.agent === filter.agent) &&
          (filter.key === undefined || g.key === filter.key)
        ),
    );
    if (this.grants.length !== before) this.save();
  }

  private live(now: number): WorkSession[] {
    return this.grants.filter((g) => now < g.until);
  }

  private save(): void {
    if (this.path === undefined) return;
    writeJsonFile(this.path, { workSessions: this.grants });
    this.version = "";
    this.refresh();
  }
}
