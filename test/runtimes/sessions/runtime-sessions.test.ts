import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { formatCost } from "../../../src/cli/format/runtime-sessions.js";
import type { EngineConfig } from "../../../src/config/engine-config.js";
import { createEngine, type Engine } from "../../../src/engine.js";
import type { Envelope } from "../../../src/model/envelope.js";
import type { Runtime } from "../../../src/model/runtime.js";
import { runtimeResolver } from "../../../src/runtimes/resolve.js";
import { sessionRunner } from "../../../src/runtimes/sessions/runner.js";
import { FAKE_CLAUDE, useFakeCliState } from "../../support/fake-clis.js";

const claude = useFakeCliState("FAKE_CLAUDE_STATE");

interface Call {
  cwd: string;
  model?: string;
  resume?: string;
  appendSystemPrompt?: string;
  prompt: string;
  sessionId: string;
}

const engines: Engine[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
});

function configFor(dataDir: string, cwd: string): EngineConfig {
  return {
    dataDir,
    agents: ["dev", "ops"],
    defaultAgent: "dev",
    agentOptions: {
      dev: {
        runtime: "claude-code",
        executable: FAKE_CLAUDE,
        cwd,
        model: "sonnet",
        instructions: "Be brief.",
      },
      ops: { runtime: "echo" },
    },
    lifecycle: { sweepIntervalMs: 0 },
    titles: { enabled: false },
    // Long enough not to compact mid-test: the prompt's 40-message cap is what is under test.
    compaction: { maxMessages: 500 },
  };
}

async function open(config: EngineConfig): Promise<Engine> {
  const engine = await createEngine(config);
  engines.push(engine);
  return engine;
}

function setup() {
  const dataDir = mkdtempSync(join(tmpdir(), "sessiond-rts-"));
  const cwd = mkdtempSync(join(tmpdir(), "sessiond-agent-"));
  return { dataDir, cwd, config: configFor(dataDir, cwd) };
}

const DM: Pick<Envelope, "channel" | "chat"> = { channel: "telegram", chat: { type: "direct", id: "42" } };
const BACKEND: Pick<Envelope, "channel" | "chat"> = {
  channel: "slack",
  chat: { type: "group", id: "backend" },
};
const FRONTEND: Pick<Envelope, "channel" | "chat"> = {
  channel: "slack",
  chat: { type: "group", id: "frontend" },
};

/** One message to `agent` in `where`, answered by the agent's runtime through the session runner. */
function say(
  engine: Engine,
  config: EngineConfig,
  where: Pick<Envelope, "channel" | "chat">,
  text: string,
  sender = "42",
  agent = "dev",
) {
  const resolve = runtimeResolver(config, (agent) => engine.agents.settings.get(agent));
  return engine.turnWith({ ...where, agent, sender: { id: sender }, text }, (context) =>
    sessionRunner(resolve(context.agent), engine.agents.store, { agents: engine.routing.agents })(context),
  );
}

describe("runtime sessions of a Claude Code agent (engine, SDK, local CLI)", () => {
  it("keeps one session per conversation: a DM and two channels make three, each resumed on later runs", async () => {
    const { config } = setup();
    const engine = await open(config);
    const keys: string[] = [];
    for (const where of [DM, BACKEND, FRONTEND]) keys.push((await say(engine, config, where, "first")).key);
    const ids = await Promise.all(keys.map(async (key) => (await engine.agents.store.get("dev", key))?.id));
    expect(new Set(ids).size).toBe(3);
    expect(claude.calls<Call>().map((c) => c.resume)).toEqual([undefined, undefined, undefined]);

    for (const where of [DM, BACKEND, FRONTEND]) await say(engine, config, where, "second");
    expect(
      claude
        .calls<Call>()
        .slice(3)
        .map((c) => c.resume),
    ).toEqual(ids);
    for (const [i, key] of keys.entries()) {
      const view = await engine.agents.conversation(key);
      expect(view.runtimeSessions).toEqual([
        {
          agent: "dev",
          runtime: "claude-code",
          id: ids[i],
          shortId: ids[i]?.slice(0, 8),
          savedAt: expect.any(Number),
        },
      ]);
      const history = await engine.history(key);
      expect(history.at(-2)).toMatchObject({
        role: "assistant",
        content: expect.stringContaining("turn 2 of"),
      });
    }
  });

  it("sends only the new activity since the agent's last finished run, never its own, warning when another agent woke it", async () => {
    const { config } = setup();
    const engine = await open(config);
    const { key } = await say(engine, config, BACKEND, "please review", "alice");
    expect(claude.calls<Call>()[0]?.prompt).toContain("[alice] please review");
    await engine.append(key, [
      { type: "message", role: "user", content: "looks risky", sender: { id: "bob" } },
      { type: "message", role: "user", content: "ship it anyway?", sender: { id: "ops" } },
    ]);
    await say(engine, config, BACKEND, "dev, your call", "ops");
    const prompt = claude.calls<Call>()[1]?.prompt ?? "";
    expect(prompt).toMatch(/^Warning: this run was triggered by another agent \(ops\)/);
    expect(prompt).toContain(
      "New activity in this conversation since your last run (3 messages, oldest first):",
    );
    expect(prompt).toContain("[bob] looks risky\n\n[ops] ship it anyway?\n\n[ops] dev, your call");
    expect(prompt).not.toContain("please review");
    expect(prompt).not.toContain("turn 1 of");

    await engine.append(
      key,
      Array.from({ length: 45 }, (_, i) => ({
        type: "message" as const,
        role: "user" as const,
        content: `note ${i}`,
        sender: { id: "carol" },
      })),
    );
    await say(engine, config, BACKEND, "summarise", "alice");
    const capped = claude.calls<Call>()[2]?.prompt ?? "";
    expect(capped).toContain("(40 messages, oldest first)");
    expect(capped).not.toContain("note 5\n");
    expect(capped).toContain("[carol] note 6\n");
    expect(capped).not.toContain("Warning");
  });

  it("clears every session of the agent when its working directory changes, with the notice; other edits clear nothing", async () => {
    const { config } = setup();
    const engine = await open(config);
    const a = (await say(engine, config, DM, "hi")).key;
    const b = (await say(engine, config, BACKEND, "hi")).key;
    const edited = await engine.agents.update("dev", { instructions: "Be thorough.", model: "opus" });
    expect(edited).toMatchObject({ cleared: 0, agent: { instructions: "Be thorough.", model: "opus" } });
    expect(edited.notice).toBeUndefined();
    await say(engine, config, DM, "still there?");
    const resumed = claude.calls<Call>()[2];
    expect(resumed).toMatchObject({ model: "opus", appendSystemPrompt: "Be thorough." });
    expect(resumed?.resume).toBe(claude.calls<Call>()[0]?.sessionId);

    const elsewhere = mkdtempSync(join(tmpdir(), "sessiond-moved-"));
    const moved = await engine.agents.update("dev", { cwd: elsewhere });
    expect(moved).toMatchObject({
      cleared: 2,
      notice: "Agent moved: New working directory. 2 saved sessions cleared, so the next run starts fresh.",
    });
    expect(await engine.agents.store.forKey(a)).toEqual([]);
    expect(await engine.agents.store.forKey(b)).toEqual([]);
    for (const key of [a, b]) {
      const note = (await engine.history(key)).at(-1);
      expect(note).toMatchObject({
        type: "note",
        code: "RUNTIME_SESSIONS_CLEARED",
        text: "Agent moved: New working directory. 2 saved sessions cleared, so the next run starts fresh.",
      });
    }
    await say(engine, config, BACKEND, "fresh start");
    const fresh = claude.calls<Call>().at(-1);
    expect(fresh).toMatchObject({ cwd: elsewhere });
    expect(fresh?.resume).toBeUndefined();
  });

  it("notices a working directory changed in the config across a restart", async () => {
    const { config, dataDir } = setup();
    const first = await open(config);
    const { key } = await say(first, config, DM, "hi");
    await first.close();
    const moved = configFor(dataDir, mkdtempSync(join(tmpdir(), "sessiond-moved-")));
    const second = await open(moved);
    expect(await second.startupWarnings()).toContain(
      "agent dev: Agent moved: New working directory. 1 saved session cleared, so the next run starts fresh.",
    );
    expect(await second.agents.store.forKey(key)).toEqual([]);
    const unchanged = await open(moved);
    expect(await unchanged.startupWarnings()).toEqual([]);
  });

  it("keeps an agent's sessions when it is left out of the config and added back", async () => {
    const { config } = setup();
    const first = await open(config);
    const { key } = await say(first, config, DM, "hi");
    const id = (await first.agents.store.get("dev", key))?.id;
    await first.close();
    const without = await open({ ...config, agents: ["ops"], defaultAgent: "ops" });
    expect(await without.startupWarnings()).toEqual([]);
    await without.close();
    const back = await open(config);
    await say(back, config, DM, "back again");
    expect(claude.calls<Call>().at(-1)?.resume).toBe(id);
  });

  it("duplicates an agent with its settings and none of its sessions; the copy routes after a restart", async () => {
    const { config } = setup();
    const engine = await open(config);
    await say(engine, config, DM, "hi");
    const copy = await engine.agents.duplicate("dev", "dev2");
    const original = await engine.agents.get("dev");
    expect(copy).toMatchObject({
      name: "dev2",
      runtime: "claude-code",
      cwd: original.cwd,
      model: "sonnet",
      instructions: "Be brief.",
    });
    await engine.close();
    const reopened = await open(config);
    expect(reopened.routing.agents).toEqual(["dev", "ops", "dev2"]);
    const { key } = await say(reopened, config, DM, "hello copy", "42", "dev2");
    expect(key).toBe("dev2:telegram:42");
    expect(claude.calls<Call>().at(-1)?.resume).toBeUndefined();
    expect((await reopened.agents.store.forKey(key)).map((s) => s.agent)).toEqual(["dev2"]);
  });

  it("deletes a conversation's runtime sessions with the conversation, and all of an agent's with the agent", async () => {
    const { config } = setup();
    const engine = await open(config);
    const a = (await say(engine, config, DM, "hi")).key;
    const b = (await say(engine, config, BACKEND, "hi")).key;
    await engine.delete(a);
    expect(await engine.agents.store.forKey(a)).toEqual([]);
    expect(await engine.agents.store.forKey(b)).toHaveLength(1);
    expect(await engine.agents.store.totals({ key: a })).toMatchObject({ pricedRuns: 0 });
    await engine.agents.delete("dev");
    expect(await engine.agents.store.forKey(b)).toEqual([]);
    await expect(engine.agents.get("dev")).rejects.toMatchObject({ code: "AGENT_NOT_FOUND" });
  });

  it("fails a run whose resume fails like any other: error recorded, needs attention, the stored id kept and retried", async () => {
    const { config } = setup();
    const engine = await open(config);
    const key = engine.route({ ...DM, agent: "dev", sender: { id: "42" }, text: "x" }).key;
    await engine.agents.store.save({
      agent: "dev",
      key,
      runtime: "claude-code",
      id: "lost-session",
      savedAt: 1,
    });

    await expect(say(engine, config, DM, "are you there?")).rejects.toMatchObject({ code: "TURN_FAILED" });
    const note = (await engine.history(key)).at(-1);
    expect(note).toMatchObject({ type: "note", code: "TURN_FAILED" });
    expect(note?.type === "note" && note.text).toContain(
      "No conversation found with session ID: lost-session",
    );
    expect(await engine.agents.conversation(key)).toMatchObject({ needsAttention: true });
    expect((await engine.agents.store.get("dev", key))?.id).toBe("lost-session");

    // The session is reachable again (restored on disk): the next run resumes the same id and clears the mark.
    writeFileSync(
      join(claude.dir, "session-lost-session.json"),
      JSON.stringify({ id: "lost-session", turns: 4, totalUsd: 4, prompts: [] }),
    );
    const result = await say(engine, config, DM, "now?");
    expect(claude.calls<Call>().at(-1)?.resume).toBe("lost-session");
    expect(result.reply?.content).toContain("turn 5 of lost-se");
    expect(await engine.agents.conversation(key)).toMatchObject({ needsAttention: false });
  });

  it("prices each run against the baseline, across a restart; the first run on an older session is not measured", async () => {
    const { config } = setup();
    const engine = await open(config);
    const first = await say(engine, config, BACKEND, "[total=2] go");
    await say(engine, config, BACKEND, "[total=5] more");
    const key = first.key;
    expect(await engine.agents.store.totals({ key })).toEqual({
      usd: 5,
      pricedRuns: 2,
      unpricedRuns: 0,
      ambiguousRuns: 0,
      notMeasuredRuns: 0,
    });
    await engine.close();

    const reopened = await open(config);
    const third = await say(reopened, config, BACKEND, "[total=6] again");
    expect(await reopened.agents.store.costOf("dev", key, third.input?.id ?? "")).toEqual({
      status: "priced",
      usd: 1,
    });
    await say(reopened, config, BACKEND, "[zero-total] crashed");
    await say(reopened, config, BACKEND, "[total=1.5] back");
    expect(await reopened.agents.store.totals({ key })).toEqual({
      usd: 7.5,
      pricedRuns: 4,
      unpricedRuns: 0,
      ambiguousRuns: 1,
      notMeasuredRuns: 0,
    });
    expect(await reopened.agents.store.totals({ agent: "dev" })).toMatchObject({ usd: 7.5 });

    const dmKey = reopened.route({ ...DM, agent: "dev", sender: { id: "42" }, text: "x" }).key;
    writeFileSync(
      join(claude.dir, "session-old.json"),
      JSON.stringify({ id: "old", turns: 9, totalUsd: 7, prompts: [] }),
    );
    await reopened.agents.store.save({
      agent: "dev",
      key: dmKey,
      runtime: "claude-code",
      id: "old",
      savedAt: 1,
    });
    const notMeasured = await say(reopened, config, DM, "hello again");
    expect(await reopened.agents.store.costOf("dev", dmKey, notMeasured.input?.id ?? "")).toEqual({
      status: "not_measured",
    });
    const shown = await reopened.agents.store.totals({ key: dmKey });
    expect(shown).toMatchObject({ unpricedRuns: 0, notMeasuredRuns: 1 });
    expect(formatCost(shown)).toBe("$0.00 over 0 priced runs; 1 run: cost not measured");
    const measured = await say(reopened, config, DM, "and again");
    expect(await reopened.agents.store.costOf("dev", dmKey, measured.input?.id ?? "")).toEqual({
      status: "priced",
      usd: 1,
    });
  });

  it("records Claude Code's own compaction as a note and keeps the transcript whole", async () => {
    const { config } = setup();
    const engine = await open(config);
    const { key } = await say(engine, config, DM, "[compact] long work");
    const history = await engine.history(key);
    expect(history.map((e) => e.type)).toEqual(["message", "message", "usage", "note"]);
    expect(history.at(-1)).toMatchObject({
      code: "RUNTIME_COMPACTED",
      text: "dev compacted its own history: 150,000 to 12,000 tokens. Nothing was removed from this transcript.",
    });
  });

  it("records a run of a runtime without a figure as unpriced, never a verified zero", async () => {
    const { config } = setup();
    const engine = await open(config);
    // A runtime that may cost something but reports no figure (a model API without prices, say).
    const silent: Runtime = {
      kind: "silent",
      async *run() {
        yield { type: "text", delta: "done" };
      },
    };
    const result = await engine.turnWith(
      { ...DM, agent: "ops", sender: { id: "42" }, text: "hi" },
      (context) => sessionRunner(silent, engine.agents.store, { agents: engine.routing.agents })(context),
    );
    expect(await engine.agents.store.costOf("ops", result.key, result.input?.id ?? "")).toEqual({
      status: "unpriced",
    });
    expect(await engine.agents.store.totals({ agent: "ops" })).toEqual({
      usd: 0,
      pricedRuns: 0,
      unpricedRuns: 1,
      ambiguousRuns: 0,
      notMeasuredRuns: 0,
    });
  });

  it("leaves nothing in the ledger for an echo run: it is offline and costs nothing", async () => {
    const { config } = setup();
    const engine = await open(config);
    const result = await say(engine, config, DM, "hi ops", "42", "ops");
    expect(result.reply?.content).toContain("You said");
    expect(await engine.agents.store.costOf("ops", result.key, result.input?.id ?? "")).toBeUndefined();
    expect(await engine.agents.store.totals({ agent: "ops" })).toEqual({
      usd: 0,
      pricedRuns: 0,
      unpricedRuns: 0,
      ambiguousRuns: 0,
      notMeasuredRuns: 0,
    });
  });
});
