import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { EngineConfig } from "../../../src/config/engine-config.js";
import { createEngine, type Engine } from "../../../src/engine.js";
import { runtimeResolver } from "../../../src/runtimes/resolve.js";
import { sessionRunner } from "../../../src/runtimes/sessions/runner.js";
import { startA2aAgent } from "../../support/a2a-server.js";
import { forkAt, rewindTo } from "../../support/engine-branch.js";
import { FAKE_CODEX, useFakeCliState } from "../../support/fake-clis.js";
import { useServer } from "../../support/http-server.js";

const codex = useFakeCliState("FAKE_CODEX_STATE");
const remote = useServer(startA2aAgent);

let engine: Engine | undefined;
afterEach(async () => {
  await engine?.close();
  engine = undefined;
});

async function setup(): Promise<{ engine: Engine; config: EngineConfig }> {
  const dataDir = mkdtempSync(join(tmpdir(), "sessiond-rts-"));
  const config: EngineConfig = {
    dataDir,
    agents: ["coder", "billing"],
    defaultAgent: "coder",
    agentOptions: {
      coder: { runtime: "codex", executable: FAKE_CODEX, cwd: dataDir, instructions: "Review only." },
      billing: { runtime: "a2a", url: remote.url, instructions: "You answer for billing." },
    },
    lifecycle: { sweepIntervalMs: 0 },
    titles: { enabled: false },
  };
  engine = await createEngine(config);
  return { engine, config };
}

function say(engine: Engine, config: EngineConfig, agent: string, text: string) {
  const resolve = runtimeResolver(config, (agent) => engine.agents.settings.get(agent));
  return engine.turnWith(
    { agent, channel: "slack", chat: { type: "group", id: "ops" }, sender: { id: "alice" }, text },
    (context) =>
      sessionRunner(resolve(context.agent), engine.agents.store, { agents: engine.routing.agents })(context),
  );
}

describe("runtime sessions of Codex and A2A agents (engine, SDKs, local CLI and A2A server)", () => {
  it("saves the Codex thread id and resumes that thread on the next run; its runs are unpriced", async () => {
    const { engine, config } = await setup();
    const first = await say(engine, config, "coder", "look at main.ts");
    const stored = await engine.agents.store.get("coder", first.key);
    expect(stored).toMatchObject({ runtime: "codex", id: codex.calls<{ threadId: string }>()[0]?.threadId });
    const second = await say(engine, config, "coder", "and utils.ts?");
    const calls = codex.calls<{ resume?: string; prompt: string }>();
    expect(calls[1]?.resume).toBe(stored?.id);
    expect(calls[0]?.prompt).toMatch(/^Review only\.\n\nNew activity/);
    expect(calls[1]?.prompt).toMatch(/^New activity in this conversation since your last run \(1 message/);
    expect(second.reply?.content).toBe(`codex turn 2 of ${stored?.id.slice(0, 8)}`);
    expect(await engine.agents.store.totals({ agent: "coder" })).toEqual({
      usd: 0,
      pricedRuns: 0,
      unpricedRuns: 2,
      ambiguousRuns: 0,
      notMeasuredRuns: 0,
    });
  });

  it("a fork or rewind clears Codex's thread and the A2A context (no fork in their SDKs), with one note naming both", async () => {
    const { engine, config } = await setup();
    const { key } = await say(engine, config, "coder", "look at main.ts");
    // A second agent in the same conversation (LoCrew's multi-agent rooms): billing answers on coder's key.
    const resolve = runtimeResolver(config, (agent) => engine.agents.settings.get(agent));
    await engine.turnWith(
      {
        agent: "coder",
        channel: "slack",
        chat: { type: "group", id: "ops" },
        sender: { id: "alice" },
        text: "[need-input] refund 7",
      },
      (context) =>
        sessionRunner(resolve("billing"), engine.agents.store, { agents: engine.routing.agents })({
          ...context,
          agent: "billing",
        }),
    );
    const head = (await engine.store.getSession(key))?.entryCount ?? 0;
    const to = "slack:group:ops-fork";
    const fork = await forkAt(engine, key, head, to);
    expect(fork.outcome).toEqual({ followed: [], cleared: ["billing", "coder"] });
    expect(await engine.agents.store.forKey(to)).toEqual([]);
    const why =
      "billing (a2a): an A2A context cannot be forked; coder (codex): its Codex SDK has no thread fork. " +
      "2 saved sessions cleared, so the next run starts fresh.";
    const noteOf = async (k: string) =>
      (await engine.history(k)).flatMap((e) => (e.type === "note" ? [[e.code, e.text]] : []));
    expect(await noteOf(to)).toEqual([
      ["RUNTIME_SESSIONS_CLEARED", `Forked from ${key} at entry ${head}: ${why}`],
    ]);
    // The parent keeps both.
    expect((await engine.agents.store.forKey(key)).map((r) => r.agent)).toEqual(["billing", "coder"]);

    await rewindTo(engine, key, head);
    expect(await engine.agents.store.forKey(key)).toEqual([]);
    expect((await noteOf(key)).at(-1)).toEqual([
      "RUNTIME_SESSIONS_CLEARED",
      `Rewound to before entry ${head}: ${why}`,
    ]);
    await say(engine, config, "coder", "again");
    expect(codex.calls<{ resume?: string }>().at(-1)?.resume).toBeUndefined();
  });

  it("keeps one A2A context per conversation, with the task id only while the task waits for input", async () => {
    const { engine, config } = await setup();
    const first = await say(engine, config, "billing", "[need-input] refund order 7");
    expect(first.reply?.content).toBe("Which file?");
    const waiting = await engine.agents.store.get("billing", first.key);
    expect(waiting?.runtime).toBe("a2a");
    expect(waiting?.data?.taskId).toMatch(/.+/);

    const second = await say(engine, config, "billing", "the one from May");
    expect(remote.requests[1]).toMatchObject({
      contextId: waiting?.id,
      taskId: waiting?.data?.taskId,
      continuedTask: true,
    });
    expect(second.reply?.content).toContain("done with");
    const done = await engine.agents.store.get("billing", first.key);
    expect(done?.id).toBe(waiting?.id);
    expect(done?.data).toBeUndefined();
    expect(remote.requests[0]?.text).toContain("You answer for billing.");
    expect(remote.requests[1]?.text).not.toContain("You answer for billing.");
  });
});
