import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../src/engine.js";
import type { RuntimeEvent } from "../../src/model/runtime.js";
import { FAKE_CLAUDE, useFakeCliState } from "../support/fake-clis.js";

const claude = useFakeCliState("FAKE_CLAUDE_STATE");
const dirs: string[] = [];
let engine: Engine | undefined;

afterEach(async () => {
  await engine?.close();
  engine = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

const DM = { channel: "telegram", chat: { type: "direct" as const, id: "42" }, sender: { id: "42" } };

describe("engine.turn with configured agents (the library, no gateway)", () => {
  it("runs a Claude Code agent's runtime, saves its runtime session and records the run's cost", async () => {
    engine = await createEngine({
      dataDir: tempDir("sessiond-agent-turn-"),
      agentOptions: {
        main: { runtime: "claude-code", executable: FAKE_CLAUDE, cwd: tempDir("sessiond-cwd-") },
      },
      titles: { enabled: false },
      lifecycle: { sweepIntervalMs: 0 },
    });
    const events: RuntimeEvent["type"][] = [];
    const first = await engine.turn(
      { ...DM, text: "[total=2] hello" },
      { onEvent: (event) => void events.push(event.type) },
    );
    expect(first.reply?.content).toContain("turn 1 of");
    expect(events).toContain("runtime_session");
    const saved = await engine.agents.store.get("main", first.key);
    expect(saved).toMatchObject({ runtime: "claude-code", id: expect.any(String) });
    expect(await engine.agents.store.costOf("main", first.key, first.input?.id ?? "")).toEqual({
      status: "priced",
      usd: 2,
    });

    const second = await engine.turn({ ...DM, text: "[total=5] again" });
    expect(claude.calls<{ resume?: string }>().map((c) => c.resume)).toEqual([undefined, saved?.id]);
    expect(await engine.agents.store.costOf("main", second.key, second.input?.id ?? "")).toEqual({
      status: "priced",
      usd: 3,
    });
    expect((await engine.agents.conversation(first.key)).cost).toMatchObject({ usd: 5, pricedRuns: 2 });
  });

  it("answers with the offline echo for an agent with no runtime configured, recording no cost", async () => {
    engine = await createEngine({
      dataDir: tempDir("sessiond-agent-turn-"),
      store: { backend: "memory" },
      titles: { enabled: false },
      lifecycle: { sweepIntervalMs: 0 },
    });
    const result = await engine.turn({ ...DM, text: "hi" });
    expect(result.reply?.content).toContain('You said: "hi"');
    expect(engine.runtimeFor("main").kind).toBe("echo");
    expect(await engine.agents.store.costOf("main", result.key, result.input?.id ?? "")).toBeUndefined();
  });
});
