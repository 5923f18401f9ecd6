import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { SessionPage } from "../../src/index.js";
import { cli, parseJson, seed, useTempDir } from "./helpers.js";

const tempDir = useTempDir();

async function seedFive(dataDir: string): Promise<void> {
  await seed(dataDir, async (engine) => {
    for (let i = 1; i <= 5; i++) {
      await engine.append(`telegram:${i}`, [
        { type: "message", role: "user", content: `hello ${i}`, ts: 1000 * i },
      ]);
    }
    await engine.append(
      "ops:slack:C1",
      [
        { type: "message", role: "user", content: "deploy?", ts: 10_000 },
        { type: "message", role: "assistant", content: "done", ts: 10_001 },
        { type: "title", title: "Deploy check", ts: 10_002 },
      ],
      { init: { agent: "ops", channel: "slack", createdBy: "u1" } },
    );
  });
}

describe("sessiond sessions list", () => {
  it("prints an aligned table, most recently active first", async () => {
    const dir = tempDir();
    const dataDir = join(dir, "data");
    await seedFive(dataDir);
    // ops is configured: a session of an agent the config lacks is marked (test/import/agents.test.ts).
    writeFileSync(join(dir, "sessiond.yaml"), "agents:\n  - id: main\n  - id: ops\n");
    const result = await cli(dir, ["--data-dir", dataDir, "sessions", "list"]);
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^KEY +AGENT +CHANNEL +TITLE +MSGS +LAST ACTIVE +STATE$/);
    expect(lines).toHaveLength(7);
    expect(lines[1]).toMatch(/^ops:slack:C1 +ops +slack +Deploy check +2 +\S.* active$/);
    expect(lines.slice(2).map((l) => l.split(/ +/)[0])).toEqual([
      "telegram:5",
      "telegram:4",
      "telegram:3",
      "telegram:2",
      "telegram:1",
    ]);
    const header = lines[0] ?? "";
    for (const column of ["AGENT", "MSGS", "LAST ACTIVE", "STATE"]) {
      const at = header.indexOf(column);
      // Every row has a cell starting at the header's column (MSGS is right-aligned: ends there).
      for (const line of lines.slice(1)) {
        if (column === "MSGS") expect(line[at + column.length - 1]).toMatch(/\d/);
        else expect(line[at - 1] === " " && line[at] !== " ").toBe(true);
      }
    }
    expect(result.stdout).not.toContain("More sessions");
  });

  it("shows when each session resets once a reset rule applies: the configured one or its own", async () => {
    const dir = tempDir();
    const dataDir = join(dir, "data");
    const now = Date.now();
    const message = (content: string, minutesAgo: number) => ({
      type: "message" as const,
      role: "user" as const,
      content,
      ts: now - minutesAgo * 60_000,
    });
    await seed(dataDir, async (engine) => {
      await engine.append("telegram:1", [message("recent", 5)]);
      await engine.append("telegram:2", [message("quiet for a while", 40)]);
      await engine.append("slack:C1", [message("kept", 50)], {
        init: { agent: "main", channel: "slack", createdBy: "u1" },
      });
      await engine.overrides.set("slack:C1", { "reset.mode": "off" });
    });
    const config = join(dir, "sessiond.yaml");
    writeFileSync(config, "session:\n  reset: { mode: idle, idle_minutes: 30 }\n");
    const result = await cli(dir, ["--config", config, "--data-dir", dataDir, "sessions", "list"]);
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^KEY +AGENT +CHANNEL +TITLE +MSGS +LAST ACTIVE +RESETS +STATE$/);
    const row = (key: string) => lines.find((l) => l.startsWith(`${key} `)) ?? "";
    expect(row("telegram:1")).toMatch(/ 5m ago +in 2[45]m +active$/);
    expect(row("telegram:2")).toMatch(/ 40m ago +due +active$/);
    expect(row("slack:C1")).toMatch(/ 50m ago +- +active$/);
  });

  it("truncates long values with an ellipsis and keeps rows on one line", async () => {
    const dir = tempDir();
    const longKey = `web:${"x".repeat(120)}`;
    await seed(dir, async (engine) => {
      await engine.append(longKey, [
        { type: "message", role: "user", content: "hi" },
        { type: "title", title: "A title that is\nmuch too long to fit into the title column" },
      ]);
    });
    const result = await cli(dir, ["--data-dir", dir, "sessions", "list"]);
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(2);
    expect(result.stdout).not.toContain(longKey);
    // KEY is cut to 48 characters, TITLE to 32, each ending in "…"; the newline in the title became a space.
    expect(lines[1]).toMatch(/^web:x{43}… /);
    expect(lines[1]).toContain(" A title that is much too long t… ");
  });

  it("pages with --cursor until every session was listed once", async () => {
    const dir = tempDir();
    await seedFive(dir);
    const keys: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const args = ["--data-dir", dir, "sessions", "list", "--json", "--limit", "2"];
      const result = await cli(dir, cursor ? [...args, "--cursor", cursor] : args);
      expect(result.code).toBe(0);
      const page = parseJson<SessionPage>(result.stdout);
      expect(page.sessions.length).toBeLessThanOrEqual(2);
      keys.push(...page.sessions.map((s) => s.key));
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== undefined && pages < 10);
    expect(pages).toBe(3);
    expect(keys).toEqual([
      "ops:slack:C1",
      "telegram:5",
      "telegram:4",
      "telegram:3",
      "telegram:2",
      "telegram:1",
    ]);
  });

  it("ends a partial table page with the command for the next page", async () => {
    const dir = tempDir();
    await seedFive(dir);
    const first = await cli(dir, [
      "--data-dir",
      dir,
      "sessions",
      "list",
      "--limit",
      "4",
      "--sort",
      "created",
    ]);
    const hint =
      /More sessions: sessiond --data-dir \S+ sessions list --limit 4 --sort created --cursor (\S+)\n$/.exec(
        first.stdout,
      );
    expect(hint).not.toBeNull();
    const second = await cli(dir, [
      ...["--data-dir", dir, "sessions", "list", "--limit", "4", "--sort", "created"],
      ...["--cursor", hint?.[1] ?? ""],
    ]);
    expect(second.code).toBe(0);
    const rows = second.stdout.trimEnd().split("\n").slice(1);
    expect(rows.map((l) => l.split(/ +/)[0])).toEqual(["telegram:2", "telegram:1"]);
    expect(second.stdout).not.toContain("More sessions");
  });

  it("filters by --agent and --channel", async () => {
    const dir = tempDir();
    await seedFive(dir);
    const ops = await cli(dir, ["--data-dir", dir, "sessions", "list", "--json", "--agent", "ops"]);
    const page = parseJson<SessionPage>(ops.stdout);
    expect(page.sessions.map((s) => s.key)).toEqual(["ops:slack:C1"]);
    expect(page.nextCursor).toBeUndefined();
    const telegram = await cli(dir, [
      "--data-dir",
      dir,
      "sessions",
      "list",
      "--json",
      "--channel",
      "telegram",
    ]);
    expect(parseJson<SessionPage>(telegram.stdout).sessions).toHaveLength(5);
    const none = await cli(dir, ["--data-dir", dir, "sessions", "list", "--agent", "nobody"]);
    expect(none).toMatchObject({ code: 0, stdout: "No sessions.\n" });
  });

  it("lists archived generations only with --all", async () => {
    const dir = tempDir();
    await seed(dir, async (engine) => {
      await engine.append("telegram:1", [{ type: "message", role: "user", content: "one" }]);
      await engine.reset("telegram:1");
    });
    const current = parseJson<SessionPage>(
      (await cli(dir, ["--data-dir", dir, "sessions", "list", "--json"])).stdout,
    );
    expect(current.sessions.map((s) => [s.generation, s.state])).toEqual([[2, "active"]]);
    const all = parseJson<SessionPage>(
      (await cli(dir, ["--data-dir", dir, "sessions", "list", "--json", "--all"])).stdout,
    );
    expect(all.sessions.map((s) => s.state).sort()).toEqual(["active", "archived"]);
  });

  it("does not create a database when there is none", async () => {
    const dir = tempDir();
    const result = await cli(dir, ["sessions", "list"]);
    expect(result).toMatchObject({ code: 0, stdout: "No sessions.\n" });
    expect(existsSync(join(dir, ".sessiond"))).toBe(false);
  });
});
