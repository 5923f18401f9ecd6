import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { createEngine, type Engine, type EngineConfig, type Envelope } from "../../src/index.js";
import { ManualClock } from "../../src/lifecycle/clock.js";

const dm = (sender: string, text: string, extra: Partial<Envelope> = {}): Envelope => ({
  channel: "telegram",
  chat: { type: "direct", id: sender },
  sender: { id: sender },
  text,
  ...extra,
});
const MINUTE = 60_000;

describe("resets and retention in the engine", () => {
  let dataDir: string;
  let engine: Engine;
  let clock: ManualClock;

  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), "sessiond-lifecycle-"));
    clock = new ManualClock(Date.now());
  });
  afterEach(async () => {
    await engine.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const open = async (lifecycle: EngineConfig["lifecycle"] = {}) => {
    engine = await createEngine({
      dataDir,
      titles: { enabled: false },
      lifecycle: { clock, sweepIntervalMs: 0, ...lifecycle },
    });
    return engine;
  };

  it("starts a new session on a bare /new without running anything", async () => {
    await open();
    const first = await engine.turnWith(dm("1", "hello"), async () => "hi");
    let ran = false;
    const result = await engine.turnWith(dm("1", "/new"), async () => {
      ran = true;
      return "never";
    });
    expect(ran).toBe(false);
    expect(result).toMatchObject({
      notice: "Started a new session.",
      reset: { cause: "trigger", previousSessionId: first.sessionId },
    });
    expect(result.reply).toBeUndefined();
    const gens = await engine.sessions.generations("telegram:1");
    expect(gens.map((g) => [g.generation, g.state, g.entryCount])).toEqual([
      [2, "active", 0],
      [1, "archived", 3],
    ]);
  });

  it("uses the text after the trigger (any case, with a bot mention) as the first message", async () => {
    await open();
    await engine.turnWith(dm("2", "old topic"), async () => "ok");
    const result = await engine.turnWith(
      dm("2", "/RESET@mybot plan the trip", { platformMessageId: "tg-7" }),
      async (context) => `${context.messages.length} message(s): ${context.input.content}`,
    );
    expect(result.reply?.content).toBe("1 message(s): plan the trip");
    expect(result.reset?.cause).toBe("trigger");
    // The same delivery again is answered from history: no second reset.
    const again = await engine.turnWith(
      dm("2", "/RESET@mybot plan the trip", { platformMessageId: "tg-7" }),
      async () => "x",
    );
    expect(again.deduplicated).toBe(true);
    expect(again.reset).toBeUndefined();
    expect(await engine.sessions.generations("telegram:2")).toHaveLength(2);
    // Not a trigger: a word that only starts like one.
    const news = await engine.turnWith(dm("2", "/newsletter please"), async () => "sure");
    expect(news.reset).toBeUndefined();
  });

  it("deletes instead of archiving when keep_archive is off", async () => {
    await open({ keepArchive: false });
    await engine.turnWith(dm("3", "secret stuff"), async () => "ok");
    await engine.turnWith(dm("3", "/new start over"), async () => "fresh");
    const gens = await engine.sessions.generations("telegram:3");
    expect(gens).toHaveLength(1);
    expect((await engine.history("telegram:3")).map((e) => e.type === "message" && e.content)).toEqual([
      "start over",
      "fresh",
    ]);
  });

  it("resets an idle session by the sweep, without waiting for a message, and on arrival", async () => {
    await open({ reset: { default: { mode: "idle", idleMinutes: 30 } } });
    await engine.turnWith(dm("4", "morning"), async () => "hello");
    await engine.turnWith(dm("5", "busy"), async () => "hello");
    clock.advance(29 * MINUTE);
    await engine.turnWith(dm("5", "still here"), async () => "yes");
    clock.advance(MINUTE);
    const report = await engine.sweep();
    expect(report.resets.archived.map((r) => [r.key, r.cause])).toEqual([["telegram:4", "idle"]]);
    expect(await engine.sessions.get("telegram:4")).toBeUndefined();
    expect((await engine.sessions.generations("telegram:4"))[0]).toMatchObject({ state: "archived" });

    clock.advance(30 * MINUTE);
    const arrival = await engine.turnWith(
      dm("5", "back again"),
      async (context) => `${context.messages.length}`,
    );
    expect(arrival.reset?.cause).toBe("idle");
    expect(arrival.reply?.content).toBe("1");
  });

  it("follows a session's own reset overrides: a rule where the config has none, none where it has one", async () => {
    await open({ reset: { byChannel: { slack: { mode: "idle", idleMinutes: 30 } } } });
    // Off for telegram, but this session resets after 5 idle minutes.
    await engine.turnWith(dm("7", "hello"), async () => "hi");
    await engine.overrides.set("telegram:7", { "reset.mode": "idle", "reset.idle_minutes": 5 });
    // Slack resets after 30 idle minutes, but not this conversation.
    const slack: Envelope = {
      channel: "slack",
      chat: { type: "direct", id: "s1" },
      sender: { id: "s1" },
      text: "hi",
    };
    await engine.turnWith(slack, async () => "hi");
    const slackKey = (await engine.sessions.list()).sessions.find((s) => s.channel === "slack")!.key;
    await engine.overrides.set(slackKey, { "reset.mode": "off" });

    clock.advance(4 * MINUTE);
    expect((await engine.turnWith(dm("7", "still here"), async () => "yes")).reset).toBeUndefined();
    clock.advance(5 * MINUTE);
    const arrival = await engine.turnWith(dm("7", "back"), async (context) => `${context.messages.length}`);
    expect(arrival.reset?.cause).toBe("idle");
    expect(arrival.reply?.content).toBe("1");

    clock.advance(60 * MINUTE);
    expect((await engine.sweep()).resets.archived.map((r) => r.key)).not.toContain(slackKey);
    expect(
      (await engine.turnWith({ ...slack, text: "an hour later" }, async () => "same session")).reset,
    ).toBeUndefined();
  });

  it("prunes single-event webhook sessions after 7 idle days: dry run first, then for real", async () => {
    await open();
    await engine.append("webhook:main:alert:ts-1700000000000", [
      { type: "message", role: "user", content: "alert" },
    ]);
    await engine.append("webhook:main:mr:1234", [
      { type: "message", role: "user", content: "merge request" },
    ]);
    // Appended through the library, these carry the real time, a moment after the clock's start.
    clock.advance(7 * 24 * 60 * MINUTE + MINUTE);
    const dry = await engine.prune({ dryRun: true });
    expect(dry.plan.sessions.map((s) => s.key)).toEqual(["webhook:main:alert:ts-1700000000000"]);
    expect(dry.applied).toBeUndefined();
    expect(await engine.sessions.get("webhook:main:alert:ts-1700000000000")).toBeDefined();
    const done = await engine.prune();
    expect(done.applied).toMatchObject({ keys: 1 });
    expect(await engine.sessions.get("webhook:main:alert:ts-1700000000000")).toBeUndefined();
    expect(await engine.sessions.get("webhook:main:mr:1234")).toBeDefined();
  });

  it("takes its triggers and schedules from sessiond.yaml", async () => {
    writeFileSync(
      join(dataDir, "sessiond.yaml"),
      "session:\n  reset_triggers: [/fresh]\n  reset_by_type:\n    direct: { mode: idle, idle_minutes: 5 }\n  sweep_interval_seconds: 0\n",
    );
    const { config } = loadConfig({ cwd: dataDir, env: {} });
    engine = await createEngine({
      ...config,
      titles: { enabled: false },
      lifecycle: { ...config.lifecycle, clock },
    });
    await engine.turnWith(dm("6", "hi"), async () => "ok");
    expect((await engine.turnWith(dm("6", "/new"), async () => "not a trigger here")).reset).toBeUndefined();
    expect((await engine.turnWith(dm("6", "/fresh"), async () => "x")).reset?.cause).toBe("trigger");
    await engine.turnWith(dm("6", "again"), async () => "ok");
    clock.advance(5 * MINUTE);
    expect((await engine.turnWith(dm("6", "later"), async () => "ok")).reset?.cause).toBe("idle");
  });
});
