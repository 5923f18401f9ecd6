import type { Temporal } from "temporal-polyfill";
import type { ChatType } from "../model/envelope.js";
import { SessiondError } from "../model/errors.js";
import type { Session } from "../model/session.js";
import { temporal } from "./temporal.js";

/** When a session is reset automatically. `timezone` is an IANA zone; the host's when absent. */
export type ResetRule =
  | { mode: "daily"; atHour: number; timezone?: string }
  | { mode: "idle"; idleMinutes: number }
  | { mode: "off" };

/** The chat types `session.reset_by_type` distinguishes; chat type `channel` counts as `group`. */
export type ResetChatType = "direct" | "group" | "thread";

export type ResetRulesByType = Partial<Record<ResetChatType, ResetRule>>;

/**
 * `session.reset`, `session.reset_by_type` and the per-channel override. A channel's entry is either one
 * rule for the whole channel or rules per chat type. Nothing configured means off.
 */
export interface ResetPolicy {
  default?: ResetRule;
  byType?: ResetRulesByType;
  byChannel?: Record<string, ResetRule | ResetRulesByType>;
}

export type ScheduledResetCause = "daily" | "idle";

export const OFF: ResetRule = Object.freeze({ mode: "off" });

/** OpenClaw's default hour for `mode: daily` when the config names none. */
export const DEFAULT_AT_HOUR = 4;

const MINUTE = 60_000;

/** The host's IANA zone (`UTC` when the runtime cannot tell). */
export function hostTimeZone(): string {
  hostZone ??= new Intl.DateTimeFormat().resolvedOptions().timeZone ?? "UTC";
  return hostZone;
}

let hostZone: string | undefined;

const knownZones = new Set<string>();

/** Throws INVALID_ARGUMENT unless `timeZone` is an IANA zone this runtime knows. */
export function validateTimeZone(timeZone: string): void {
  if (typeof timeZone !== "string" || timeZone.length === 0) {
    throw new SessiondError("INVALID_ARGUMENT", "timezone must be a non-empty IANA zone name", {
      details: { field: "timezone" },
    });
  }
  if (knownZones.has(timeZone)) return;
  try {
    new Intl.DateTimeFormat("en-US", { timeZone });
  } catch (error) {
    throw new SessiondError("INVALID_ARGUMENT", `unknown time zone ${JSON.stringify(timeZone)}`, {
      cause: error,
      details: { field: "timezone", timezone: timeZone },
    });
  }
  knownZones.add(timeZone);
}

/**
 * The instant of `hour:00` on `date` in `timeZone`. Where that wall time occurs twice (fall back), the
 * first occurrence; where it does not occur (spring forward), the first instant after the gap.
 */
function localHourInstant(date: Temporal.PlainDate, hour: number, timeZone: string): number {
  const wall = date.toPlainDateTime({ hour });
  const earlier = wall.toZonedDateTime(timeZone, { disambiguation: "earlier" });
  if (earlier.toPlainDateTime().equals(wall)) return earlier.epochMilliseconds;
  // In a gap `earlier` is the wall time moved back by the gap's length: the next transition ends the gap.
  return (earlier.getTimeZoneTransition("next") ?? earlier).epochMilliseconds;
}

function validateAtHour(atHour: number): void {
  if (!Number.isInteger(atHour) || atHour < 0 || atHour > 23) {
    throw new SessiondError("INVALID_ARGUMENT", `at_hour must be an integer from 0 to 23, not ${atHour}`, {
      details: { field: "at_hour", atHour },
    });
  }
}

function validateInstant(t: number, name: string): void {
  if (!Number.isFinite(t)) {
    throw new SessiondError("INVALID_ARGUMENT", `${name} must be a finite number of milliseconds`);
  }
}

/**
 * The most recent instant ≤ `now` at which the local time in `timeZone` was `atHour`:00: the daily reset
 * boundary. On a spring-forward day without that hour, the first instant after the gap (02:00 in
 * Europe/Berlin on the last Sunday of March is 03:00 CEST); on a fall-back day with it twice, the first.
 */
export function lastDailyBoundary(now: number, atHour: number, timeZone: string = hostTimeZone()): number {
  return dailyPeriod(now, atHour, timeZone).from;
}

/** The first daily boundary strictly after `after` (same rules as `lastDailyBoundary`). */
export function nextDailyBoundary(after: number, atHour: number, timeZone: string = hostTimeZone()): number {
  return dailyPeriod(after, atHour, timeZone).until;
}

interface DailyPeriod {
  from: number;
  until: number;
}

/** The latest period per zone and hour: sweeps and arriving messages ask about the same day over and over. */
const periods = new Map<string, DailyPeriod>();

/** The boundaries around `t`: `from <= t < until`. */
function dailyPeriod(t: number, atHour: number, timeZone: string): DailyPeriod {
  validateInstant(t, "time");
  validateAtHour(atHour);
  validateTimeZone(timeZone);
  const cacheKey = `${timeZone}|${atHour}`;
  const cached = periods.get(cacheKey);
  if (cached !== undefined && cached.from <= t && t < cached.until) return cached;
  const today = temporal().Instant.fromEpochMilliseconds(t).toZonedDateTimeISO(timeZone).toPlainDate();
  const boundary = localHourInstant(today, atHour, timeZone);
  const period =
    boundary <= t
      ? { from: boundary, until: localHourInstant(today.add({ days: 1 }), atHour, timeZone) }
      : { from: localHourInstant(today.subtract({ days: 1 }), atHour, timeZone), until: boundary };
  periods.set(cacheKey, period);
  return period;
}

/** Throws INVALID_ARGUMENT unless the rule is complete and in range (zone names included). */
export function validateResetRule(rule: ResetRule): void {
  switch (rule?.mode) {
    case "off":
      return;
    case "idle":
      if (!Number.isInteger(rule.idleMinutes) || rule.idleMinutes < 1) {
        throw new SessiondError(
          "INVALID_ARGUMENT",
          `idle_minutes must be a positive integer, not ${rule.idleMinutes}`,
          { details: { field: "idle_minutes", idleMinutes: rule.idleMinutes } },
        );
      }
      return;
    case "daily":
      validateAtHour(rule.atHour);
      if (rule.timezone !== undefined) validateTimeZone(rule.timezone);
      return;
    default: {
      const mode: unknown = (rule as { mode?: unknown } | undefined)?.mode;
      throw new SessiondError(
        "INVALID_ARGUMENT",
        `reset mode must be "off", "daily" or "idle", not ${JSON.stringify(mode)}`,
        { details: { field: "mode" } },
      );
    }
  }
}

function isRule(entry: ResetRule | ResetRulesByType): entry is ResetRule {
  return "mode" in entry;
}

/** Every rule the policy names, at any level. */
export function policyRules(policy: ResetPolicy): ResetRule[] {
  const rules: ResetRule[] = [];
  if (policy.default) rules.push(policy.default);
  for (const rule of Object.values(policy.byType ?? {})) if (rule) rules.push(rule);
  for (const entry of Object.values(policy.byChannel ?? {})) {
    if (isRule(entry)) rules.push(entry);
    else for (const rule of Object.values(entry)) if (rule) rules.push(rule);
  }
  return rules;
}

/** Throws INVALID_ARGUMENT on the first invalid rule of the policy. */
export function validateResetPolicy(policy: ResetPolicy): void {
  for (const rule of policyRules(policy)) validateResetRule(rule);
}

/** Whether any rule of the policy can reset anything (all off, or nothing configured: false). */
export function policyEnabled(policy: ResetPolicy): boolean {
  return policyRules(policy).some((rule) => rule.mode !== "off");
}

/** The reset_by_type bucket of a chat type: `channel` counts as `group`; unknown has none. */
export function resetChatType(chatType: ChatType | undefined): ResetChatType | undefined {
  switch (chatType) {
    case "direct":
    case "group":
    case "thread":
      return chatType;
    case "channel":
      return "group";
    default:
      return undefined;
  }
}

/**
 * The rule that applies to a session, most specific first: the channel's rule for the chat type, the
 * channel's rule, `byType` for the chat type, the default; `off` when none. A more specific `off` wins
 * over a less specific schedule. A session without a chat type matches only channel-wide rules and the
 * default.
 */
export function ruleFor(session: Pick<Session, "channel" | "chatType">, policy: ResetPolicy): ResetRule {
  const type = resetChatType(session.chatType);
  const channel = Object.hasOwn(policy.byChannel ?? {}, session.channel)
    ? policy.byChannel?.[session.channel]
    : undefined;
  if (channel !== undefined) {
    if (isRule(channel)) return channel;
    const forType = type === undefined ? undefined : channel[type];
    if (forType !== undefined) return forType;
  }
  const byType = type === undefined ? undefined : policy.byType?.[type];
  return byType ?? policy.default ?? OFF;
}

/** The session settings (`sessiond sessions set`) that change its reset rule. */
const RESET_OVERRIDES = ["reset.mode", "reset.at_hour", "reset.idle_minutes", "reset.timezone"] as const;

/** Whether the session carries an override of its reset rule. */
export function hasResetOverride(session: Pick<Session, "overrides">): boolean {
  return RESET_OVERRIDES.some((name) => session.overrides[name] !== undefined);
}

/**
 * The rule that resets this session: the policy's (`ruleFor`), with the session's own overrides on top
 * (`reset.mode`, `reset.at_hour`, `reset.idle_minutes`, `reset.timezone`). What the session does not
 * override comes from the policy's rule when that rule has it; a daily rule with no hour anywhere resets
 * at 04:00, and an idle rule with no minutes anywhere does not reset (nothing says when).
 */
export function sessionRule(
  session: Pick<Session, "channel" | "chatType" | "overrides">,
  policy: ResetPolicy,
): ResetRule {
  const base = ruleFor(session, policy);
  if (!hasResetOverride(session)) return base;
  const o = session.overrides;
  const mode = typeof o["reset.mode"] === "string" ? o["reset.mode"] : base.mode;
  switch (mode) {
    case "idle": {
      const minutes = o["reset.idle_minutes"] ?? (base.mode === "idle" ? base.idleMinutes : undefined);
      return typeof minutes === "number" ? { mode: "idle", idleMinutes: minutes } : OFF;
    }
    case "daily": {
      const atHour = o["reset.at_hour"] ?? (base.mode === "daily" ? base.atHour : DEFAULT_AT_HOUR);
      const timezone = o["reset.timezone"] ?? (base.mode === "daily" ? base.timezone : undefined);
      const rule: ResetRule = {
        mode: "daily",
        atHour: typeof atHour === "number" ? atHour : DEFAULT_AT_HOUR,
      };
      if (typeof timezone === "string") rule.timezone = timezone;
      return rule;
    }
    default:
      return OFF;
  }
}

/**
 * Whether the rule resets the session at `now`, and why. Idle: `now - lastActivityAt` is at least
 * `idleMinutes` (exactly at the minute counts). Daily: the last activity is before the most recent daily
 * boundary ≤ `now`.
 */
export function dueReset(
  session: Pick<Session, "lastActivityAt">,
  rule: ResetRule,
  now: number,
): ScheduledResetCause | undefined {
  validateResetRule(rule);
  switch (rule.mode) {
    case "off":
      return undefined;
    case "idle":
      return now - session.lastActivityAt >= rule.idleMinutes * MINUTE ? "idle" : undefined;
    case "daily":
      return session.lastActivityAt < lastDailyBoundary(now, rule.atHour, rule.timezone)
        ? "daily"
        : undefined;
  }
}

/**
 * The instant the rule makes the session due (it is due at `t` exactly when `nextDue(...) <= t`), or
 * undefined when the rule is off. For lists that show a reset as due before the next message arrives.
 */
export function nextDue(session: Pick<Session, "lastActivityAt">, rule: ResetRule): number | undefined {
  validateResetRule(rule);
  switch (rule.mode) {
    case "off":
      return undefined;
    case "idle":
      return session.lastActivityAt + rule.idleMinutes * MINUTE;
    case "daily":
      return nextDailyBoundary(session.lastActivityAt, rule.atHour, rule.timezone);
  }
}

/**
 * The earliest last-activity time that no rule of the policy finds due at `now`: every due session was
 * last active before it. Undefined when the policy resets nothing.
 */
export function dueCutoff(policy: ResetPolicy, now: number): number | undefined {
  let cutoff: number | undefined;
  for (const rule of policyRules(policy)) {
    validateResetRule(rule);
    let c: number | undefined;
    if (rule.mode === "idle") c = now - rule.idleMinutes * MINUTE + 1;
    else if (rule.mode === "daily") c = lastDailyBoundary(now, rule.atHour, rule.timezone);
    if (c !== undefined && (cutoff === undefined || c > cutoff)) cutoff = c;
  }
  return cutoff;
}

/** A rule as `sessiond.yaml` spells it (`session.reset`, an entry of `reset_by_type`). */
export interface ResetRuleSettingsShape {
  mode: "off" | "daily" | "idle";
  at_hour?: number | undefined;
  timezone?: string | undefined;
  idle_minutes?: number | undefined;
}

type ByTypeSettingsShape = Partial<Record<ResetChatType, ResetRuleSettingsShape | undefined>>;

/**
 * Converts a config rule: `daily` without `at_hour` resets at 04:00 (OpenClaw's default); `idle`
 * without `idle_minutes` is an error. Throws INVALID_ARGUMENT with `details.field`.
 */
export function resetRuleFromSettings(settings: ResetRuleSettingsShape): ResetRule {
  let rule: ResetRule;
  switch (settings.mode) {
    case "off":
      rule = { mode: "off" };
      break;
    case "daily":
      rule = { mode: "daily", atHour: settings.at_hour ?? DEFAULT_AT_HOUR };
      if (settings.timezone !== undefined) rule.timezone = settings.timezone;
      break;
    case "idle":
      if (settings.idle_minutes === undefined) {
        throw new SessiondError("INVALID_ARGUMENT", "mode: idle needs idle_minutes", {
          details: { field: "idle_minutes" },
        });
      }
      rule = { mode: "idle", idleMinutes: settings.idle_minutes };
      break;
    default:
      rule = settings as ResetRule;
  }
  validateResetRule(rule);
  return rule;
}

function byTypeFromSettings(settings: ByTypeSettingsShape): ResetRulesByType {
  const rules: ResetRulesByType = {};
  for (const type of ["direct", "group", "thread"] as const) {
    const rule = settings[type];
    if (rule !== undefined) rules[type] = resetRuleFromSettings(rule);
  }
  return rules;
}

/** Builds the policy from `session.reset`, `session.reset_by_type` and `session.reset_by_channel`. */
export function resetPolicyFromSettings(settings: {
  reset?: ResetRuleSettingsShape | undefined;
  reset_by_type?: ByTypeSettingsShape | undefined;
  reset_by_channel?: Record<string, ResetRuleSettingsShape | ByTypeSettingsShape> | undefined;
}): ResetPolicy {
  const policy: ResetPolicy = {};
  if (settings.reset !== undefined) policy.default = resetRuleFromSettings(settings.reset);
  if (settings.reset_by_type !== undefined) policy.byType = byTypeFromSettings(settings.reset_by_type);
  if (settings.reset_by_channel !== undefined) {
    const byChannel: Record<string, ResetRule | ResetRulesByType> = {};
    for (const [channel, entry] of Object.entries(settings.reset_by_channel)) {
      byChannel[channel] =
        "mode" in entry
          ? resetRuleFromSettings(entry as ResetRuleSettingsShape)
          : byTypeFromSettings(entry as ByTypeSettingsShape);
    }
    policy.byChannel = byChannel;
  }
  return policy;
}
