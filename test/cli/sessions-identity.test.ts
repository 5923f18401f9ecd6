import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli, seed, useTempDir } from "./helpers.js";

const tempDir = useTempDir();

describe("sessiond sessions relink / forget", () => {
  it("reports the sessions new identity links orphan, then carries them over", async () => {
    const dir = tempDir();
    await seed(dir, async (engine) => {
      await engine.append("telegram:123", [{ type: "message", role: "user", content: "from telegram" }]);
      await engine.append("discord:dm:987", [{ type: "message", role: "user", content: "from discord" }]);
      await engine.append("telegram:555", [{ type: "message", role: "user", content: "someone else" }]);
    });
    writeFileSync(
      join(dir, "sessiond.yaml"),
      'session:\n  identity_links:\n    alice: ["telegram:123", "discord:dm:987"]\n',
    );
    const run = (...args: string[]) => cli(dir, ["--data-dir", dir, "sessions", ...args]);
    const listed = await run("list");
    expect(listed.code).toBe(0);
    expect(listed.stderr).toContain(
      "warning: session.identity_links changed: discord:dm:987 now routes to telegram:123",
    );
    const check = await run("relink");
    expect(check.code).toBe(0);
    expect(check.stdout).toContain("discord:dm:987 → telegram:123");
    const applied = await run("relink", "--apply");
    expect(applied.stdout).toContain("moved discord:dm:987 → telegram:123");
    expect((await run("relink")).stdout).toContain("nothing to relink");
    expect((await run("list")).stderr).not.toContain("warning");
    const shown = JSON.parse((await run("show", "telegram:123", "--all", "--json")).stdout) as {
      entries: Array<{ content?: string }>;
    };
    expect(shown.entries.map((e) => e.content).filter(Boolean)).toEqual(
      expect.arrayContaining(["from telegram", "from discord"]),
    );

    expect((await run("forget", "alice")).code).toBe(2);
    const forgot = await run("forget", "alice", "--yes", "--json");
    expect(forgot.code).toBe(0);
    expect(JSON.parse(forgot.stdout)).toMatchObject({ person: "alice" });
    expect((await run("show", "telegram:123")).code).toBe(1);
    expect((await run("show", "telegram:555")).code).toBe(0);
  });
});
