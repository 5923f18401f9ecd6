import { describe, expect, it } from "vitest";
import {
  DEFAULT_AT_HOUR,
  dueCutoff,
  dueReset,
  hasResetOverride,
  hostTimeZone,
  lastDailyBoundary,
  nextDailyBoundary,
  nextDue,
  policyEnabled,
  type ResetPolicy,
  type ResetRule,
  resetPolicyFromSettings,
  resetRuleFromSettings,
  ruleFor,
  sessionRule,
  validateResetPolicy,
  validateResetRule,
} from "../../src/lifecycle/reset-policy.js";
import type { ChatType } from "../../src/model/envelope.js";
import { isSessiondError } from "../../src/model/errors.js";

const at = (iso: string) => Date.parse(iso);
const iso = (t: number) => new Date(t).toISOString();
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

function invalid(fn: () => unknown): boolean {
  try {
    fn();
  } catch (error) {
    return isSessiondError(error, "INVALID_ARGUMENT");
  }
  return false;
}

describe("lastDailyBoundary", () => {
  it("is atHour:00 local time on an ordinary day, or the day before when that is still ahead", () => {
    expect(iso(lastDailyBoundary(at("2025-06-10T12:00:00Z"), 4, "Europe/Berlin"))).toBe(
      "2025-06-10T02:00:00.000Z",
    );
    expect(iso(lastDailyBoundary(at("2025-06-10T01:59:59.999Z"), 4, "Europe/Berlin"))).toBe(
      "2025-06-09T02:00:00.000Z",
    );
    expect(iso(lastDailyBoundary(at("2025-01-10T12:00:00Z"), 4, "Europe/Berlin"))).toBe(
      "2025-01-10T03:00:00.000Z",
    );
  });

  it("counts the boundary itself as passed", () => {
    const boundary = at("2025-06-10T02:00:00Z");
    expect(lastDailyBoundary(boundary, 4, "Europe/Berlin")).toBe(boundary);
    expect(nextDailyBoundary(boundary, 4, "Europe/Berlin")).toBe(boundary + 24 * HOUR);
  });

  describe("Europe/Berlin", () => {
    // 2025-03-30: 02:00 CET jumps to 03:00 CEST at 01:00Z. 2025-10-26: 03:00 CEST falls back to 02:00 CET at 01:00Z.
    it("spring forward: an hour inside the gap means the first instant after it (03:00 CEST)", () => {
      const afterGap = at("2025-03-30T01:00:00Z");
      expect(lastDailyBoundary(at("2025-03-30T12:00:00Z"), 2, "Europe/Berlin")).toBe(afterGap);
      expect(lastDailyBoundary(afterGap, 2, "Europe/Berlin")).toBe(afterGap);
      expect(iso(lastDailyBoundary(afterGap - 1, 2, "Europe/Berlin"))).toBe("2025-03-29T01:00:00.000Z");
      // 03:00 exists and is the same instant.
      expect(lastDailyBoundary(at("2025-03-30T12:00:00Z"), 3, "Europe/Berlin")).toBe(afterGap);
    });

    it("spring forward: the day is 23 hours long", () => {
      const sunday = lastDailyBoundary(at("2025-03-30T12:00:00Z"), 4, "Europe/Berlin");
      const saturday = lastDailyBoundary(at("2025-03-29T12:00:00Z"), 4, "Europe/Berlin");
      expect(iso(saturday)).toBe("2025-03-29T03:00:00.000Z");
      expect(iso(sunday)).toBe("2025-03-30T02:00:00.000Z");
      expect(sunday - saturday).toBe(23 * HOUR);
    });

    it("fall back: an hour that happens twice resets at the first occurrence only", () => {
      const first = at("2025-10-26T00:00:00Z"); // 02:00 CEST
      expect(lastDailyBoundary(at("2025-10-26T12:00:00Z"), 2, "Europe/Berlin")).toBe(first);
      // 02:30 CET, the second time 02:xx comes round: still the first occurrence.
      expect(lastDailyBoundary(at("2025-10-26T01:30:00Z"), 2, "Europe/Berlin")).toBe(first);
      const activeBetween = { lastActivityAt: at("2025-10-26T00:30:00Z") }; // 02:30 CEST
      const rule: ResetRule = { mode: "daily", atHour: 2, timezone: "Europe/Berlin" };
      expect(dueReset(activeBetween, rule, at("2025-10-26T01:30:00Z"))).toBeUndefined();
      expect(dueReset(activeBetween, rule, at("2025-10-26T23:59:59Z"))).toBeUndefined();
      expect(dueReset(activeBetween, rule, at("2025-10-27T01:00:00Z"))).toBe("daily");
    });

    it("fall back: the day is 25 hours long", () => {
      const saturday = lastDailyBoundary(at("2025-10-25T12:00:00Z"), 4, "Europe/Berlin");
      const sunday = nextDailyBoundary(saturday, 4, "Europe/Berlin");
      expect(iso(saturday)).toBe("2025-10-25T02:00:00.000Z");
      expect(iso(sunday)).toBe("2025-10-26T03:00:00.000Z");
      expect(sunday - saturday).toBe(25 * HOUR);
    });

    it("a session idle across the gap is due once the boundary passes, not before", () => {
      const rule: ResetRule = { mode: "daily", atHour: 2, timezone: "Europe/Berlin" };
      const session = { lastActivityAt: at("2025-03-29T22:00:00Z") };
      expect(dueReset(session, rule, at("2025-03-30T00:59:59.999Z"))).toBeUndefined();
      expect(dueReset(session, rule, at("2025-03-30T01:00:00Z"))).toBe("daily");
      expect(nextDue(session, rule)).toBe(at("2025-03-30T01:00:00Z"));
    });
  });

  describe("America/New_York", () => {
    // 2025-03-09: 02:00 EST jumps to 03:00 EDT at 07:00Z. 2025-11-02: 02:00 EDT falls back to 01:00 EST at 06:00Z.
    it("spring forward: 02:00 does not exist, so 03:00 EDT", () => {
      expect(iso(lastDailyBoundary(at("2025-03-09T12:00:00Z"), 2, "America/New_York"))).toBe(
        "2025-03-09T07:00:00.000Z",
      );
      expect(iso(lastDailyBoundary(at("2025-03-09T06:59:59Z"), 2, "America/New_York"))).toBe(
        "2025-03-08T07:00:00.000Z",
      );
      expect(iso(lastDailyBoundary(at("2025-03-09T12:00:00Z"), 1, "America/New_York"))).toBe(
        "2025-03-09T06:00:00.000Z",
      );
    });

    it("fall back: 01:00 happens twice, the first (EDT) counts", () => {
      expect(iso(lastDailyBoundary(at("2025-11-02T12:00:00Z"), 1, "America/New_York"))).toBe(
        "2025-11-02T05:00:00.000Z",
      );
      expect(iso(lastDailyBoundary(at("2025-11-02T06:30:00Z"), 1, "America/New_York"))).toBe(
        "2025-11-02T05:00:00.000Z",
      );
      expect(iso(nextDailyBoundary(at("2025-11-02T05:00:00Z"), 1, "America/New_York"))).toBe(
        "2025-11-03T06:00:00.000Z",
      );
    });
  });

  it("Australia/Lord_Howe moves its clocks by half an hour: 02:00 in the gap is 02:30 +11:00", () => {
    // 2026-10-04: 02:00 +10:30 jumps to 02:30 +11:00 at 15:30Z the day before.
    expect(iso(lastDailyBoundary(at("2026-10-04T00:00:00Z"), 2, "Australia/Lord_Howe"))).toBe(
      "2026-10-03T15:30:00.000Z",
    );
    expect(iso(nextDailyBoundary(at("2026-10-03T15:29:59Z"), 2, "Australia/Lord_Howe"))).toBe(
      "2026-10-03T15:30:00.000Z",
    );
  });

  it("Asia/Tokyo has no DST: every day is 24 hours, 04:00 JST is 19:00Z the day before", () => {
    let boundary = lastDailyBoundary(at("2025-01-01T00:00:00Z"), 4, "Asia/Tokyo");
    expect(iso(boundary)).toBe("2024-12-31T19:00:00.000Z");
    for (let day = 0; day < 366; day++) {
      const next = nextDailyBoundary(boundary, 4, "Asia/Tokyo");
      expect(next - boundary).toBe(24 * HOUR);
      boundary = next;
    }
  });

  it("uses the host's zone by default", () => {
    const now = at("2025-07-01T12:34:56Z");
    expect(lastDailyBoundary(now, 4)).toBe(lastDailyBoundary(now, 4, hostTimeZone()));
    expect(dueReset({ lastActivityAt: 0 }, { mode: "daily", atHour: 4 }, now)).toBe("daily");
  });

  it("rejects unknown zones and hours outside 0..23", () => {
    const now = at("2025-07-01T12:00:00Z");
    expect(invalid(() => lastDailyBoundary(now, 4, "Mars/Olympus_Mons"))).toBe(true);
    expect(invalid(() => lastDailyBoundary(now, 4, ""))).toBe(true);
    for (const hour of [-1, 24, 1.5, Number.NaN])
      expect(invalid(() => lastDailyBoundary(now, hour, "UTC"))).toBe(true);
    expect(invalid(() => lastDailyBoundary(Number.NaN, 4, "UTC"))).toBe(true);
    expect(lastDailyBoundary(now, 0, "UTC")).toBe(at("2025-07-01T00:00:00Z"));
    expect(lastDailyBoundary(now, 23, "UTC")).toBe(at("2025-06-30T23:00:00Z"));
  });
});

describe("dueReset and nextDue", () => {
  const idle: ResetRule = { mode: "idle", idleMinutes: 30 };
  const last = at("2025-05-05T10:00:00Z");

  it("idle: due exactly at the minute, not a millisecond before", () => {
    const session = { lastActivityAt: last };
    expect(dueReset(session, idle, last + 30 * MINUTE - 1)).toBeUndefined();
    expect(dueReset(session, idle, last + 30 * MINUTE)).toBe("idle");
    expect(dueReset(session, idle, last + 30 * MINUTE + 1)).toBe("idle");
    expect(nextDue(session, idle)).toBe(last + 30 * MINUTE);
  });

  it("daily: due when the last activity is before the latest boundary, even by a millisecond", () => {
    const rule: ResetRule = { mode: "daily", atHour: 4, timezone: "UTC" };
    const boundary = at("2025-05-06T04:00:00Z");
    expect(dueReset({ lastActivityAt: boundary - 1 }, rule, boundary)).toBe("daily");
    expect(dueReset({ lastActivityAt: boundary - 1 }, rule, boundary - 1)).toBeUndefined();
    expect(dueReset({ lastActivityAt: boundary }, rule, boundary + 23 * HOUR)).toBeUndefined();
    expect(nextDue({ lastActivityAt: boundary - 1 }, rule)).toBe(boundary);
    expect(nextDue({ lastActivityAt: boundary }, rule)).toBe(boundary + 24 * HOUR);
  });

  it("off: never due", () => {
    expect(dueReset({ lastActivityAt: 0 }, { mode: "off" }, Date.now())).toBeUndefined();
    expect(nextDue({ lastActivityAt: 0 }, { mode: "off" })).toBeUndefined();
  });

  it("agrees with nextDue at every instant, across both DST changes", () => {
    const rules: ResetRule[] = [
      { mode: "daily", atHour: 2, timezone: "Europe/Berlin" },
      { mode: "daily", atHour: 1, timezone: "America/New_York" },
      { mode: "daily", atHour: 0, timezone: "Asia/Tokyo" },
      { mode: "idle", idleMinutes: 90 },
    ];
    const starts = [at("2025-03-08T00:00:00Z"), at("2025-10-25T00:00:00Z")];
    for (const rule of rules) {
      for (const start of starts) {
        for (let t = start; t < start + 4 * 24 * HOUR; t += 37 * MINUTE) {
          const session = { lastActivityAt: t };
          const due = nextDue(session, rule);
          expect(due).toBeGreaterThan(t);
          for (const now of [t + 5 * MINUTE, t + 3 * HOUR, t + 20 * HOUR, t + 30 * HOUR]) {
            expect(
              dueReset(session, rule, now) !== undefined,
              `${JSON.stringify(rule)} ${iso(t)} ${iso(now)}`,
            ).toBe((due ?? Number.POSITIVE_INFINITY) <= now);
          }
        }
      }
    }
  });
});

describe("ruleFor", () => {
  const rule = (idleMinutes: number): ResetRule => ({ mode: "idle", idleMinutes });
  const policy: ResetPolicy = {
    default: rule(1),
    byType: { direct: rule(2), group: rule(3) },
    byChannel: {
      telegram: { group: rule(4), thread: { mode: "off" } },
      discord: rule(5),
      slack: { mode: "off" },
    },
  };
  const session = (channel: string, chatType?: ChatType) => ({ channel, ...(chatType ? { chatType } : {}) });

  const cases: Array<[string, ChatType | undefined, ResetRule, string]> = [
    ["telegram", "group", rule(4), "channel + type"],
    ["telegram", "channel", rule(4), "channel + type (channel counts as group)"],
    ["telegram", "thread", { mode: "off" }, "channel + type, off wins"],
    ["telegram", "direct", rule(2), "type (the channel has no rule for direct)"],
    ["telegram", undefined, rule(1), "default (no chat type, no channel-wide rule)"],
    ["discord", "group", rule(5), "channel"],
    ["discord", "direct", rule(5), "channel"],
    ["discord", undefined, rule(5), "channel"],
    ["slack", "direct", { mode: "off" }, "channel, off wins over type and default"],
    ["web", "direct", rule(2), "type"],
    ["web", "channel", rule(3), "type (channel counts as group)"],
    ["web", "thread", rule(1), "default"],
    ["web", undefined, rule(1), "default"],
  ];
  it.each(cases)("%s/%s gets %j: %s", (channel, chatType, expected) => {
    expect(ruleFor(session(channel, chatType), policy)).toEqual(expected);
  });

  it("is off when nothing is configured", () => {
    expect(ruleFor(session("web", "direct"), {})).toEqual({ mode: "off" });
    expect(policyEnabled({})).toBe(false);
    expect(policyEnabled({ default: { mode: "off" }, byType: { group: { mode: "off" } } })).toBe(false);
    expect(policyEnabled(policy)).toBe(true);
  });

  it("ignores inherited property names as channels", () => {
    expect(ruleFor(session("toString", "direct"), policy)).toEqual(rule(2));
  });
});

describe("sessionRule: the policy's rule with the session's own reset overrides", () => {
  const policy: ResetPolicy = {
    default: { mode: "daily", atHour: 4, timezone: "Europe/Berlin" },
    byChannel: { slack: { mode: "idle", idleMinutes: 60 }, web: { mode: "off" } },
  };
  const session = (channel: string, overrides: Record<string, string | number> = {}) => ({
    channel,
    overrides,
  });

  it("is the policy's rule when the session overrides nothing", () => {
    expect(sessionRule(session("telegram"), policy)).toEqual(policy.default);
    expect(sessionRule(session("telegram", { model: "m" }), policy)).toEqual(policy.default);
    expect(hasResetOverride(session("telegram", { model: "m" }))).toBe(false);
  });

  it("takes each overridden field, and the rest from the policy's rule of the same mode", () => {
    expect(sessionRule(session("telegram", { "reset.at_hour": 6 }), policy)).toEqual({
      mode: "daily",
      atHour: 6,
      timezone: "Europe/Berlin",
    });
    expect(sessionRule(session("slack", { "reset.idle_minutes": 15 }), policy)).toEqual({
      mode: "idle",
      idleMinutes: 15,
    });
    expect(sessionRule(session("telegram", { "reset.mode": "off" }), policy)).toEqual({ mode: "off" });
    expect(sessionRule(session("web", { "reset.mode": "idle", "reset.idle_minutes": 30 }), policy)).toEqual({
      mode: "idle",
      idleMinutes: 30,
    });
  });

  it("resets daily at 04:00 in the host's zone when nothing names an hour, and never when idle has no minutes", () => {
    expect(sessionRule(session("web", { "reset.mode": "daily" }), policy)).toEqual({
      mode: "daily",
      atHour: 4,
    });
    expect(sessionRule(session("web", { "reset.mode": "idle" }), policy)).toEqual({ mode: "off" });
    expect(sessionRule(session("slack", { "reset.mode": "idle" }), policy)).toEqual({
      mode: "idle",
      idleMinutes: 60,
    });
    expect(hasResetOverride(session("web", { "reset.mode": "idle" }))).toBe(true);
  });
});

describe("validation and config", () => {
  it("rejects incomplete or out-of-range rules", () => {
    const bad = [
      { mode: "idle", idleMinutes: 0 },
      { mode: "idle", idleMinutes: 1.5 },
      { mode: "daily", atHour: 24 },
      { mode: "daily", atHour: 4, timezone: "Nowhere/Special" },
      { mode: "weekly" },
    ] as unknown as ResetRule[];
    for (const rule of bad) expect(invalid(() => validateResetRule(rule))).toBe(true);
    expect(invalid(() => validateResetPolicy({ byChannel: { x: { thread: bad[3] } } }))).toBe(true);
    expect(invalid(() => dueReset({ lastActivityAt: 0 }, bad[0] as ResetRule, 0))).toBe(true);
  });

  it("converts config rules: daily defaults to 04:00, idle needs its minutes", () => {
    expect(resetRuleFromSettings({ mode: "daily" })).toEqual({ mode: "daily", atHour: DEFAULT_AT_HOUR });
    expect(resetRuleFromSettings({ mode: "daily", at_hour: 6, timezone: "Asia/Tokyo" })).toEqual({
      mode: "daily",
      atHour: 6,
      timezone: "Asia/Tokyo",
    });
    expect(resetRuleFromSettings({ mode: "idle", idle_minutes: 45 })).toEqual({
      mode: "idle",
      idleMinutes: 45,
    });
    expect(invalid(() => resetRuleFromSettings({ mode: "idle" }))).toBe(true);
    expect(invalid(() => resetRuleFromSettings({ mode: "daily", timezone: "Not/AZone" }))).toBe(true);
    expect(
      resetPolicyFromSettings({
        reset: { mode: "idle", idle_minutes: 60 },
        reset_by_type: { group: { mode: "daily", at_hour: 3 } },
        reset_by_channel: {
          telegram: { mode: "off" },
          discord: { thread: { mode: "idle", idle_minutes: 5 } },
        },
      }),
    ).toEqual({
      default: { mode: "idle", idleMinutes: 60 },
      byType: { group: { mode: "daily", atHour: 3 } },
      byChannel: { telegram: { mode: "off" }, discord: { thread: { mode: "idle", idleMinutes: 5 } } },
    });
  });
});

describe("dueCutoff", () => {
  const now = at("2025-06-10T12:00:00Z");

  it("is the latest cutoff of any rule; every due session was active before it", () => {
    const policy: ResetPolicy = {
      default: { mode: "idle", idleMinutes: 24 * 60 },
      byType: { group: { mode: "idle", idleMinutes: 60 } },
      byChannel: { telegram: { mode: "daily", atHour: 4, timezone: "UTC" } },
    };
    expect(dueCutoff(policy, now)).toBe(now - 60 * MINUTE + 1);
    expect(dueCutoff({ default: { mode: "daily", atHour: 11, timezone: "UTC" } }, now)).toBe(
      at("2025-06-10T11:00:00Z"),
    );
  });

  it("is undefined when nothing resets", () => {
    expect(dueCutoff({}, now)).toBeUndefined();
    expect(dueCutoff({ default: { mode: "off" } }, now)).toBeUndefined();
  });
});
