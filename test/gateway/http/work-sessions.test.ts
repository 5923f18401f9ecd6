import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { EngineConfig } from "../../../src/config/engine-config.js";
import { ManualClock } from "../../../src/lifecycle/clock.js";
import { FAKE_CLAUDE, FAKE_CODEX, useFakeCliState } from "../../support/fake-clis.js";
import { postJson, startTestGateway, type TestGateway } from "./helpers.js";

const claude = useFakeCliState("FAKE_CLAUDE_STATE");
const codex = useFakeCliState("FAKE_CODEX_STATE");

interface Call {
  argv: string[];
  prompt: string;
  sessionId?: string;
  threadId?: string;
}

const MINUTE = 60_000;
let dataDir: string;
let clock: ManualClock;
let gw: TestGateway;

const config = (): EngineConfig => ({
  dataDir,
  store: { backend: "sqlite", path: join(dataDir, "sessiond.db") },
  agents: ["dev", "cx", "yolo"],
  defaultAgent: "dev",
  agentOptions: {
    dev: {
      runtime: "claude-code",
      executable: FAKE_CLAUDE,
      permission: "ask-first",
      selfCompact: "off",
      selfCompactWindow: 150_000,
    },
    cx: { runtime: "codex", executable: FAKE_CODEX, permission: "ask-first" },
    yolo: { runtime: "claude-code", executable: FAKE_CLAUDE, permission: "auto" },
  },
  lifecycle: { clock, sweepIntervalMs: 0 },
});

beforeEach(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "sessiond-work-"));
  clock = new ManualClock(Date.UTC(2026, 11, 1, 12, 0));
  gw = await startTestGateway(config());
});
afterEach(async () => {
  await gw.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const chat = async (message: string, agent = "dev") => {
  const res = await gw.api("/api/app/alice", postJson({ message, agent }));
  expect(res.status).toBe(200);
  return (await res.json()).key as string;
};
const mode = (call: Call | undefined) => call?.argv.find((a) => a.startsWith("--permission-mode"));
interface WorkBody {
  workSession: unknown;
  workSessions: unknown[];
  runtimeSessions: unknown[];
  agent: { workSessions: unknown[] };
}
const body = async (res: Response) => (await res.json()) as WorkBody;
const detail = async (key: string) => body(await gw.api(`/api/sessions/${encodeURIComponent(key)}`));

describe("work sessions (LoCrew: temporary permission for an ask-first agent to write without asking)", () => {
  it("let an ask-first Claude Code agent write in one conversation until they expire, clearing nothing", async () => {
    const key = await chat("first");
    expect(mode(claude.calls<Call>()[0])).toBe("--permission-mode=default");

    const res = await gw.api(
      `/api/sessions/${encodeURIComponent(key)}/work-session`,
      postJson({ agent: "dev", minutes: 30 }),
    );
    expect(res.status).toBe(201);
    const until = clock.now() + 30 * MINUTE;
    expect((await body(res)).workSession).toEqual({ agent: "dev", key, startedAt: clock.now(), until });

    await chat("write the file");
    // Shown in the conversation's details and listed per agent; the runtime session is the same one.
    expect((await detail(key)).workSessions).toEqual([
      { agent: "dev", key, startedAt: expect.any(Number), until },
    ]);
    const agent = (await body(await gw.api("/api/agents/dev"))).agent;
    expect(agent.workSessions).toEqual([{ agent: "dev", key, startedAt: expect.any(Number), until }]);
    // Another conversation of the same agent still asks.
    await gw.api("/api/app/bob", postJson({ message: "hi", agent: "dev" }));

    clock.advance(30 * MINUTE);
    await chat("and now?");
    const calls = claude.calls<Call>();
    expect(calls.map(mode)).toEqual([
      "--permission-mode=default",
      "--permission-mode=acceptEdits",
      "--permission-mode=default",
      "--permission-mode=default",
    ]);
    // Not a runtime session: every run of alice's conversation resumed the first one.
    const alice = [calls[0], calls[1], calls[3]].map((c) => c?.sessionId);
    expect(new Set(alice).size).toBe(1);
    expect(calls[2]?.sessionId).not.toBe(alice[0]);
    expect((await detail(key)).workSessions).toEqual([]);
    expect((await detail(key)).runtimeSessions).toHaveLength(1);
  });

  it("survive a restart, and can be ended early", async () => {
    const key = await chat("first");
    await gw.api(`/api/sessions/${encodeURIComponent(key)}/work-session`, postJson({ agent: "dev" }));
    await gw.close();
    gw = await startTestGateway(config());
    expect((await detail(key)).workSessions).toMatchObject([
      { agent: "dev", until: clock.now() + 30 * MINUTE },
    ]);
    await chat("after the restart");
    expect(mode(claude.calls<Call>().at(-1))).toBe("--permission-mode=acceptEdits");

    const ended = await gw.api(`/api/sessions/${encodeURIComponent(key)}/work-session?agent=dev`, {
      method: "DELETE",
    });
    expect(await ended.json()).toEqual({ ended: true });
    await chat("ended");
    expect(mode(claude.calls<Call>().at(-1))).toBe("--permission-mode=default");
  });

  it("give Codex its sandbox and approval policy, and are refused for an auto agent", async () => {
    const key = await chat("hello", "cx");
    await gw.api(
      `/api/sessions/${encodeURIComponent(key)}/work-session`,
      postJson({ agent: "cx", minutes: 5 }),
    );
    await chat("write it", "cx");
    const [asking, writing] = codex.calls<Call>().map((c) => c.argv.join(" "));
    expect(asking).toContain("--sandbox read-only");
    expect(asking).toContain('approval_policy="on-request"');
    expect(writing).toContain("--sandbox workspace-write");
    expect(writing).toContain('approval_policy="never"');

    const refused = await gw.api(
      `/api/sessions/${encodeURIComponent(key)}/work-session`,
      postJson({ agent: "yolo" }),
    );
    expect(refused.status).toBe(400);
    expect((await refused.json()).error.message).toContain("already writes without asking");
    const missing = await gw.api("/api/sessions/app_api%3Anobody/work-session", postJson({ agent: "dev" }));
    expect(missing.status).toBe(404);
  });
});

describe("Let it compact its own history (Claude Code)", () => {
  it("passes the agent's auto-compaction setting and window to the CLI, and records its compactions", async () => {
    const key = await chat("[compact] a long one");
    const [call] = claude.calls<Call>();
    const settings = call?.argv[(call?.argv.indexOf("--settings") ?? -2) + 1];
    expect(JSON.parse(settings ?? "null")).toEqual({ autoCompactEnabled: false, autoCompactWindow: 150_000 });
    const history = (await (await gw.api(`/api/sessions/${encodeURIComponent(key)}/history`)).json()).entries;
    expect(history).toContainEqual(
      expect.objectContaining({
        type: "note",
        code: "RUNTIME_COMPACTED",
        text: "dev compacted its own history: 150,000 to 12,000 tokens. Nothing was removed from this transcript.",
      }),
    );
    // An agent that leaves it alone sends no settings.
    await chat("hi", "yolo");
    expect(claude.calls<Call>().at(-1)?.argv).not.toContain("--settings");
  });
});
