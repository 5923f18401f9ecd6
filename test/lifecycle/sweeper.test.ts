import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ManualClock, systemTimer } from "../../src/lifecycle/clock.js";
import type { ResetPolicy } from "../../src/lifecycle/reset-policy.js";
import {
  type ApplyScheduledReset,
  resetIfDue,
  Sweeper,
  type SweepReport,
  sweepDueResets,
} from "../../src/lifecycle/sweeper.js";
import type { ChatType } from "../../src/model/envelope.js";
import { isSessiondError } from "../../src/model/errors.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { openStore } from "../../src/store/open.js";
import type { Store } from "../../src/store/store.js";

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

interface Seed {
  key: string;
  lastActivityAt: number;
  channel?: string;
  chatType?: ChatType;
}

async function seed(store: Store, seeds: Seed[]): Promise<void> {
  await Promise.all(
    seeds.map((s) =>
      store.append(s.key, [{ type: "message", role: "user", content: "hello", ts: s.lastActivityAt }], {
        init: {
          agent: "main",
          channel: s.channel ?? "telegram",
          createdBy: "u1",
          ...(s.chatType ? { chatType: s.chatType } : {}),
        },
      }),
    ),
  );
}

const backends: Array<[string, (dir: string) => Promise<Store>]> = [
  ["memory", async () => new MemoryStore()],
  [
    "sqlite",
    (dir) => openStore({ backend: "sqlite", path: join(dir, "sessiond.db"), durability: "relaxed" }),
  ],
];

for (const [backend, open] of backends) {
  describe(`sweepDueResets (${backend})`, () => {
    let dir: string;
    let store: Store;

    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), "sessiond-sweep-"));
      store = await open(dir);
    });

    afterEach(async () => {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    });

    it("archives exactly the due sessions with their own rule's cause; a second sweep finds nothing", async () => {
      // Monday 2025-06-02 10:00 UTC = 12:00 in Berlin; the Berlin 04:00 boundary was 02:00Z.
      const now = Date.parse("2025-06-02T10:00:00Z");
      const boundary = Date.parse("2025-06-02T02:00:00Z");
      const policy: ResetPolicy = {
        default: { mode: "idle", idleMinutes: 24 * 60 },
        byType: { direct: { mode: "daily", atHour: 4, timezone: "Europe/Berlin" } },
        byChannel: {
          telegram: { group: { mode: "idle", idleMinutes: 30 }, thread: { mode: "off" } },
          slack: { mode: "off" },
        },
      };
      await seed(store, [
        { key: "direct-yesterday", chatType: "direct", lastActivityAt: boundary - 1 },
        { key: "direct-at-boundary", chatType: "direct", lastActivityAt: boundary },
        { key: "group-idle-31", chatType: "group", lastActivityAt: now - 31 * MINUTE },
        { key: "group-idle-exact", chatType: "channel", lastActivityAt: now - 30 * MINUTE },
        { key: "group-idle-29", chatType: "group", lastActivityAt: now - 30 * MINUTE + 1 },
        { key: "thread-off", chatType: "thread", lastActivityAt: now - 300 * DAY },
        { key: "slack-off", channel: "slack", chatType: "direct", lastActivityAt: now - 300 * DAY },
        { key: "web-group-default", channel: "web", chatType: "group", lastActivityAt: now - DAY },
        { key: "web-thread-recent", channel: "web", chatType: "thread", lastActivityAt: now - DAY + 1 },
      ]);

      const result = await sweepDueResets(store, policy, now);
      expect(
        result.archived.map(({ key, cause }) => ({ key, cause })).sort((a, b) => a.key.localeCompare(b.key)),
      ).toEqual([
        { key: "direct-yesterday", cause: "daily" },
        { key: "group-idle-31", cause: "idle" },
        { key: "group-idle-exact", cause: "idle" },
        { key: "web-group-default", cause: "idle" },
      ]);
      expect(result.skipped).toBe(0);
      // Candidates are the sessions last active before the latest cutoff (now - 30 min), not the whole store.
      expect(result.scanned).toBe(8);

      for (const { key, cause, sessionId } of result.archived) {
        expect(await store.getSession(key)).toBeUndefined();
        const [archived] = await store.generations(key);
        expect(archived?.id).toBe(sessionId);
        expect(archived?.state).toBe("archived");
        const [last] = await store.readEntries(sessionId, { order: "desc", limit: 1 });
        expect(last).toMatchObject({ type: "reset", cause });
      }
      for (const key of [
        "direct-at-boundary",
        "group-idle-29",
        "thread-off",
        "slack-off",
        "web-thread-recent",
      ]) {
        expect((await store.getSession(key))?.state).toBe("active");
      }

      const again = await sweepDueResets(store, policy, now);
      expect(again.archived).toEqual([]);
      // Still before the latest cutoff but not due under their own rules.
      expect(again.scanned).toBe(4);

      // The next message starts the next generation.
      const next = await store.append(
        "group-idle-31",
        [{ type: "message", role: "user", content: "back", ts: now }],
        {
          init: {
            agent: "main",
            channel: "telegram",
            chatType: "group",
            createdBy: "u1",
          },
        },
      );
      expect(next.session.generation).toBe(2);
    });

    it("pages through many candidates with a small page size", async () => {
      const now = Date.parse("2025-06-02T10:00:00Z");
      const seeds: Seed[] = [];
      for (let i = 0; i < 25; i++) {
        seeds.push({ key: `old-${i}`, lastActivityAt: now - 2 * HOUR - i * 1000, chatType: "group" });
        seeds.push({ key: `off-${i}`, lastActivityAt: now - 2 * HOUR - i * 1000 - 500, chatType: "thread" });
        seeds.push({ key: `new-${i}`, lastActivityAt: now - i * 1000 });
      }
      // Same activity time on purpose: the cursor must break ties by id.
      for (let i = 0; i < 5; i++)
        seeds.push({ key: `tie-${i}`, lastActivityAt: now - 3 * HOUR, chatType: "direct" });
      await seed(store, seeds);
      const policy: ResetPolicy = {
        default: { mode: "idle", idleMinutes: 60 },
        byType: { thread: { mode: "off" } },
      };
      const result = await sweepDueResets(store, policy, now, { limit: 3 });
      expect(result.archived).toHaveLength(30);
      expect(result.scanned).toBe(55);
      expect(new Set(result.archived.map((a) => a.key)).size).toBe(30);
      expect(result.archived.every((a) => !a.key.startsWith("off-") && !a.key.startsWith("new-"))).toBe(true);
      expect((await sweepDueResets(store, policy, now, { limit: 3 })).archived).toHaveLength(0);
    });

    it("deletes the key instead when keepArchive is false", async () => {
      const now = Date.parse("2025-06-02T10:00:00Z");
      await seed(store, [
        { key: "gone", lastActivityAt: now - 2 * HOUR },
        { key: "stays", lastActivityAt: now - 10 * MINUTE },
      ]);
      const result = await sweepDueResets(store, { default: { mode: "idle", idleMinutes: 60 } }, now, {
        keepArchive: false,
      });
      expect(result.archived.map((a) => a.key)).toEqual(["gone"]);
      expect(await store.generations("gone")).toEqual([]);
      expect(await store.getSession("stays")).toBeDefined();
    });

    it("does not scan at all when the policy resets nothing", async () => {
      await seed(store, [{ key: "a", lastActivityAt: 1 }]);
      const scan = vi.spyOn(store, "scanSessions");
      for (const policy of [{}, { default: { mode: "off" } }] as ResetPolicy[]) {
        expect(await sweepDueResets(store, policy, Date.now())).toEqual({
          archived: [],
          scanned: 0,
          skipped: 0,
        });
      }
      expect(scan).not.toHaveBeenCalled();
    });

    it("hands due sessions to a custom apply (the engine's lane) and counts what it leaves alone", async () => {
      const now = Date.parse("2025-06-02T10:00:00Z");
      await seed(store, [
        { key: "a", lastActivityAt: now - 2 * HOUR },
        { key: "b", lastActivityAt: now - 3 * HOUR },
      ]);
      const policy: ResetPolicy = { default: { mode: "idle", idleMinutes: 60 } };
      const calls: string[] = [];
      const apply: ApplyScheduledReset = async (session, cause) => {
        calls.push(`${session.key}:${cause}`);
        if (session.key === "a") {
          // A message arrived while the sweep was on its way: the fresh read finds it not due.
          await store.append("a", [{ type: "message", role: "user", content: "still here", ts: now }]);
        }
        return resetIfDue(store, session.key, policy, now);
      };
      const result = await sweepDueResets(store, policy, now, { apply });
      expect(calls.sort()).toEqual(["a:idle", "b:idle"]);
      expect(result.archived.map((a) => a.key)).toEqual(["b"]);
      expect(result.skipped).toBe(1);
      expect(await store.getSession("a")).toBeDefined();
    });

    it("resetIfDue: undefined for a missing or fresh session, the reset otherwise", async () => {
      const now = Date.parse("2025-06-02T10:00:00Z");
      await seed(store, [{ key: "k", lastActivityAt: now - 61 * MINUTE }]);
      const policy: ResetPolicy = { default: { mode: "idle", idleMinutes: 60 } };
      expect(await resetIfDue(store, "missing", policy, now)).toBeUndefined();
      expect(await resetIfDue(store, "k", policy, now - 2 * MINUTE)).toBeUndefined();
      const session = await store.getSession("k");
      expect(await resetIfDue(store, "k", policy, now)).toEqual({
        key: "k",
        sessionId: session?.id,
        cause: "idle",
      });
      expect(await resetIfDue(store, "k", policy, now)).toBeUndefined();
    });

    it("sweeps 100,000 sessions by reading only the few hundred that are due", async () => {
      const now = Date.parse("2025-06-02T10:00:00Z");
      const total = 100_000;
      const idle = 300;
      const keyOf = (i: number) => `agent:main:telegram:direct:u${String(i).padStart(6, "0")}`;
      // Ascending activity in key order keeps the build fast; indexes append at their ends.
      const activityOf = (i: number) =>
        i < idle
          ? now - 3 * HOUR + i * 1000
          : i === idle
            ? now - 60 * MINUTE // exactly at the minute: due
            : i === idle + 1
              ? now - 60 * MINUTE + 1 // a millisecond short: not due
              : now - 50 * MINUTE + i * 10;
      const chunk = 10_000;
      for (let start = 0; start < total; start += chunk) {
        const seeds: Seed[] = [];
        for (let i = start; i < Math.min(total, start + chunk); i++) {
          seeds.push({ key: keyOf(i), lastActivityAt: activityOf(i), chatType: "direct" });
        }
        await seed(store, seeds);
      }
      const policy: ResetPolicy = { default: { mode: "idle", idleMinutes: 60 } };

      const result = await sweepDueResets(store, policy, now);

      expect(result.archived).toHaveLength(idle + 1);
      expect(result.archived.map((a) => a.key)).toEqual(Array.from({ length: idle + 1 }, (_, i) => keyOf(i)));
      expect(result.archived.every((a) => a.cause === "idle")).toBe(true);
      expect(result.scanned).toBe(idle + 1);
      expect((await store.getSession(keyOf(idle + 1)))?.state).toBe("active");

      const again = await sweepDueResets(store, policy, now);
      expect(again).toEqual({ archived: [], scanned: 0, skipped: 0 });
      // Building 100,000 sessions (each with its search row) takes over a minute on a loaded machine.
    }, 300_000);
  });
}

describe("Sweeper", () => {
  const start = Date.parse("2025-06-02T10:00:00Z");
  let store: MemoryStore;
  let clock: ManualClock;
  const policy: ResetPolicy = { default: { mode: "idle", idleMinutes: 60 } };

  beforeEach(() => {
    store = new MemoryStore();
    clock = new ManualClock(start);
  });

  afterEach(async () => {
    await store.close();
  });

  const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

  it("resets a session once it becomes due, without waiting for its next message", async () => {
    await seed(store, [{ key: "k", lastActivityAt: start }]);
    const reports: SweepReport[] = [];
    // The store commits on the writer's next turn: each step waits for the run it started to report.
    let reported: () => void = () => undefined;
    const nextReport = () => new Promise<void>((resolve) => (reported = resolve));
    const onSweep = (r: SweepReport) => {
      reports.push(r);
      reported();
    };
    const sweeper = new Sweeper({ store, policy, clock, timer: clock, onSweep });
    sweeper.start(5 * MINUTE);
    expect(sweeper.started).toBe(true);

    let report = nextReport();
    clock.advance(55 * MINUTE);
    await report;
    expect(reports.length).toBeGreaterThan(0);
    expect(reports.every((r) => r.resets.archived.length === 0)).toBe(true);
    expect(await store.getSession("k")).toBeDefined();

    report = nextReport();
    clock.advance(5 * MINUTE); // exactly 60 minutes idle
    await report;
    expect(reports.at(-1)?.now).toBe(start + 60 * MINUTE);
    expect(reports.at(-1)?.resets.archived).toEqual([expect.objectContaining({ key: "k", cause: "idle" })]);
    expect(await store.getSession("k")).toBeUndefined();

    await sweeper.stop();
    expect(clock.pending).toBe(0);
    const before = reports.length;
    clock.advance(HOUR);
    await flush();
    expect(reports.length).toBe(before);
  });

  it("never overlaps runs: ticks while a run is in progress are skipped", async () => {
    await seed(store, [{ key: "k", lastActivityAt: start - 2 * HOUR }]);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let applied = 0;
    const apply: ApplyScheduledReset = async (session) => {
      applied += 1;
      await gate;
      return resetIfDue(store, session.key, policy, clock.now());
    };
    const scans = vi.spyOn(store, "scanSessions");
    const reports: SweepReport[] = [];
    const sweeper = new Sweeper({
      store,
      policy,
      clock,
      timer: clock,
      apply,
      onSweep: (r) => reports.push(r),
    });
    sweeper.start(1000);
    clock.advance(1000);
    await flush();
    expect(sweeper.running).toBe(true);
    for (let i = 0; i < 5; i++) {
      clock.advance(1000);
      await flush();
    }
    expect(scans).toHaveBeenCalledTimes(1);
    expect(applied).toBe(1);
    const joined = sweeper.runOnce();
    release();
    const report = await joined;
    expect(report.resets.archived.map((a) => a.key)).toEqual(["k"]);
    await flush();
    expect(sweeper.running).toBe(false);
    expect(reports).toHaveLength(1);
    await sweeper.stop();
  });

  it("stop() waits for the run in progress", async () => {
    await seed(store, [{ key: "k", lastActivityAt: start - 2 * HOUR }]);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const apply: ApplyScheduledReset = async (session) => {
      await gate;
      return resetIfDue(store, session.key, policy, clock.now());
    };
    const sweeper = new Sweeper({ store, policy, clock, timer: clock, apply, onError: () => undefined });
    sweeper.start(1000);
    clock.advance(1000);
    await flush();
    let stopped = false;
    const stopping = sweeper.stop().then(() => {
      stopped = true;
    });
    await flush();
    expect(stopped).toBe(false);
    release();
    await stopping;
    expect(stopped).toBe(true);
    expect(await store.getSession("k")).toBeUndefined();
  });

  it("reports errors through onError and never throws out of the timer", async () => {
    const errors: unknown[] = [];
    const sweeper = new Sweeper({ store, policy, clock, timer: clock, onError: (e) => errors.push(e) });
    await store.close();
    sweeper.start(1000);
    for (let i = 0; i < 3; i++) {
      clock.advance(1000);
      await flush();
    }
    expect(errors).toHaveLength(3);
    expect(errors.every((e) => isSessiondError(e, "STORE_CLOSED"))).toBe(true);
    await expect(sweeper.runOnce()).rejects.toMatchObject({ code: "STORE_CLOSED" });

    const throwing = new Sweeper({
      store,
      policy,
      clock,
      timer: clock,
      onError: () => {
        throw new Error("a broken callback");
      },
    });
    const consoleError = vi.spyOn(console, "error").mockImplementation(() => undefined);
    throwing.start(1000);
    clock.advance(1000);
    await flush();
    expect(consoleError).toHaveBeenCalledWith("sessiond: sweep callback failed", expect.any(Error));
    consoleError.mockRestore();
    await sweeper.stop();
    await throwing.stop();
  });

  it("re-reads a policy given as a function on every run", async () => {
    await seed(store, [{ key: "k", lastActivityAt: start - 2 * HOUR }]);
    let current: ResetPolicy = {};
    const sweeper = new Sweeper({ store, policy: () => current, clock, timer: clock });
    expect((await sweeper.runOnce()).resets.archived).toEqual([]);
    current = policy;
    expect((await sweeper.runOnce()).resets.archived.map((a) => a.key)).toEqual(["k"]);
  });

  it("applies retention in the same run when configured", async () => {
    await seed(store, [
      { key: "webhook:main:alert:ts-1", lastActivityAt: start - 8 * DAY },
      { key: "webhook:main:alert:incident-9", lastActivityAt: start - 8 * DAY },
    ]);
    const sweeper = new Sweeper({
      store,
      policy: {},
      retention: { webhookIdleDays: 7 },
      clock,
      timer: clock,
    });
    const report = await sweeper.runOnce();
    expect(report.retention).toMatchObject({ keys: 1, sessions: 1 });
    expect(await store.getSession("webhook:main:alert:ts-1")).toBeUndefined();
    expect(await store.getSession("webhook:main:alert:incident-9")).toBeDefined();
  });

  it("rejects a non-positive interval, and replaces the schedule on a second start", () => {
    const sweeper = new Sweeper({ store, policy, clock, timer: clock });
    for (const interval of [0, -1, Number.NaN]) {
      expect(() => sweeper.start(interval)).toThrow(/positive/);
    }
    sweeper.start(1000);
    sweeper.start(2000);
    expect(clock.pending).toBe(1);
  });

  it("the system timer does not keep the process alive", () => {
    const handle = systemTimer.setInterval(() => undefined, 60_000) as NodeJS.Timeout;
    expect(handle.hasRef()).toBe(false);
    systemTimer.clearInterval(handle);
  });
});
