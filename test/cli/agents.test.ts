import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli, parseJson, seed, useTempDir } from "./helpers.js";

const tempDir = useTempDir();

/** A data dir with sessiond.yaml naming two agents, and the conversation `telegram:7` where dev has a session. */
async function setup(): Promise<{ dir: string; cwd: string }> {
  const dir = tempDir();
  const cwd = mkdtempSync(join(tmpdir(), "sessiond-agent-"));
  writeFileSync(
    join(dir, "sessiond.yaml"),
    [
      "data_dir: .",
      "default_agent: dev",
      "agents:",
      "  - id: dev",
      "    runtime: claude-code",
      `    cwd: ${cwd}`,
      "    model: sonnet",
      "    instructions: Be brief.",
      "  - id: ops",
      "    runtime: echo",
      "",
    ].join("\n"),
  );
  await seed(
    dir,
    async (engine) => {
      await engine.append("telegram:7", [
        { type: "message", role: "user", content: "hi", sender: { id: "7" } },
      ]);
      await engine.agents.store.save({
        agent: "dev",
        key: "telegram:7",
        runtime: "claude-code",
        id: "3f2a9c1e-0000-4000-8000-000000000001",
        savedAt: 1,
      });
    },
    {
      agents: ["dev", "ops"],
      defaultAgent: "dev",
      agentOptions: { dev: { runtime: "claude-code", cwd, model: "sonnet" }, ops: { runtime: "echo" } },
    },
  );
  return { dir, cwd };
}

describe("sessiond agents and runtime sessions in the CLI", () => {
  it("`sessions show` prints each agent's short runtime session id, or No session here yet", async () => {
    const { dir } = await setup();
    const result = await cli(dir, ["sessions", "show", "telegram:7"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^ {2}dev +claude-code +3f2a9c1e$/m);
    // A conversation of one agent lists just it; ops appears once it has a session here.
    expect(result.stdout).not.toMatch(/^ {2}ops/m);
    expect(result.stdout).toMatch(/^cost: \$0\.00 over 0 priced runs$/m);
  });

  it("`agents work-session` lets dev write without asking in one conversation, shown there and per agent", async () => {
    const { dir } = await setup();
    const started = await cli(dir, ["agents", "work-session", "dev", "telegram:7", "--minutes", "45"]);
    expect(started.stderr).toBe("");
    expect(started.stdout).toMatch(
      /^work session: dev may write without asking in telegram:7 until \d{4}-\d\d-\d\d \d\d:\d\d UTC\n$/,
    );
    const show = await cli(dir, ["sessions", "show", "telegram:7"]);
    expect(show.stdout).toMatch(/^work session: dev may write without asking until .+ UTC$/m);
    // It is not a runtime session: dev's stays.
    expect(show.stdout).toMatch(/^ {2}dev +claude-code +3f2a9c1e$/m);
    const agent = parseJson<{ workSessions: Array<{ key: string; until: number; startedAt: number }> }>(
      (await cli(dir, ["agents", "show", "dev", "--json"])).stdout,
    );
    expect(agent.workSessions.map((w) => [w.key, w.until - w.startedAt])).toEqual([
      ["telegram:7", 45 * 60_000],
    ]);
    expect((await cli(dir, ["agents", "show", "dev"])).stdout).toContain("work session: dev may write");

    const ended = await cli(dir, ["agents", "work-session", "dev", "telegram:7", "--end"]);
    expect(ended.stdout).toBe("work session of dev in telegram:7 ended\n");
    expect((await cli(dir, ["sessions", "show", "telegram:7"])).stdout).not.toContain("work session");
    const missing = await cli(dir, ["agents", "work-session", "dev", "telegram:8"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('error [SESSION_NOT_FOUND]: no session for key "telegram:8"\n');
  });

  it("lists agents, and a new working directory clears the agent's sessions with the notice", async () => {
    const { dir, cwd } = await setup();
    const list = await cli(dir, ["agents", "list", "--json"]);
    expect(list.code).toBe(0);
    const agents = parseJson<{ agents: Array<{ name: string; runtime: string; cwd?: string }> }>(
      list.stdout,
    ).agents;
    expect(agents.map((a) => [a.name, a.runtime, a.cwd])).toEqual([
      ["dev", "claude-code", cwd],
      ["ops", "echo", undefined],
    ]);

    const kept = await cli(dir, ["agents", "set", "dev", "instructions=Be thorough.", "model=opus"]);
    expect(kept.stdout).toBe("agent dev updated\n");
    const moved = await cli(dir, ["agents", "set", "dev", `cwd=${tempDir()}`]);
    expect(moved.code).toBe(0);
    expect(moved.stdout).toContain(
      "Agent moved: New working directory. 1 saved session cleared, so the next run starts fresh.",
    );
    const show = await cli(dir, ["sessions", "show", "telegram:7"]);
    expect(show.stdout).toMatch(/^ {2}dev +No session here yet$/m);
    expect(show.stdout).toContain("note [info RUNTIME_SESSIONS_CLEARED]: Agent moved: New working directory");
    expect(existsSync(join(dir, "agents.json"))).toBe(true);
  });

  it("duplicates an agent with its settings and no sessions; deleting needs --yes", async () => {
    const { dir, cwd } = await setup();
    const dup = await cli(dir, ["agents", "duplicate", "dev", "dev2"]);
    expect(dup.stdout).toBe("agent dev2 created from dev: same settings, no sessions\n");
    const shown = parseJson<Record<string, unknown>>(
      (await cli(dir, ["agents", "show", "dev2", "--json"])).stdout,
    );
    expect(shown).toMatchObject({
      name: "dev2",
      runtime: "claude-code",
      cwd,
      model: "sonnet",
      instructions: "Be brief.",
    });
    expect(shown.cost).toEqual({
      usd: 0,
      pricedRuns: 0,
      unpricedRuns: 0,
      ambiguousRuns: 0,
      notMeasuredRuns: 0,
    });

    const refused = await cli(dir, ["agents", "delete", "dev2"]);
    expect(refused.code).toBe(2);
    expect((await cli(dir, ["agents", "delete", "dev2", "--yes"])).code).toBe(0);
    const gone = await cli(dir, ["agents", "show", "dev2"]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain("AGENT_NOT_FOUND");
    expect((await cli(dir, ["agents", "set", "dev", "colour=blue"])).code).toBe(2);
  });

  it("with the JSONL store, agent settings, runtime sessions and the cost ledger persist too", async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, "sessiond.yaml"),
      [
        "data_dir: .",
        "store:",
        "  backend: jsonl",
        "default_agent: dev",
        "agents:",
        "  - id: dev",
        "    runtime: echo",
        "",
      ].join("\n"),
    );
    await seed(
      dir,
      async (engine) => {
        await engine.append("telegram:7", [
          { type: "message", role: "user", content: "hi", sender: { id: "7" } },
        ]);
        await engine.agents.store.save({
          agent: "dev",
          key: "telegram:7",
          runtime: "codex",
          id: "9b1c2d3e-0000-4000-8000-000000000002",
          savedAt: 1,
        });
        await engine.agents.store.recordCost({
          agent: "dev",
          key: "telegram:7",
          runId: "run-1",
          runtime: "codex",
          status: "priced",
          usd: 0.25,
          at: 1,
        });
      },
      { store: { backend: "jsonl", path: join(dir, "sessions") }, agents: ["dev"], defaultAgent: "dev" },
    );
    const set = await cli(dir, ["agents", "set", "dev", "model=opus"]);
    expect(set.stdout).toBe("agent dev updated\n");
    const shown = parseJson<Record<string, unknown>>(
      (await cli(dir, ["agents", "show", "dev", "--json"])).stdout,
    );
    expect(shown).toMatchObject({ name: "dev", model: "opus" });
    const show = await cli(dir, ["sessions", "show", "telegram:7"]);
    expect(show.stdout).toMatch(/^ {2}dev +codex +9b1c2d3e$/m);
    expect(show.stdout).toMatch(/^cost: \$0\.25 over 1 priced run/m);
    // sessiond's own files stay out of the CrabTalk directory's session files.
    expect(existsSync(join(dir, "sessions", ".sessiond", "agents.json"))).toBe(true);
    expect(existsSync(join(dir, "sessions", ".sessiond", "runtime-sessions.db"))).toBe(true);
  });
});
