import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli, seed, useTempDir } from "./helpers.js";

const tempDir = useTempDir();

describe("sessiond sessions set / unset", () => {
  it("stores overrides, removes one set to the inherited value, and unsets", async () => {
    const dir = tempDir();
    writeFileSync(
      join(dir, "sessiond.yaml"),
      "models:\n  gpt-4o: { provider: openai, model: gpt-4o }\n" +
        "agents:\n  - id: main\n    compaction: { max_messages: 80 }\n",
    );
    await seed(dir, async (engine) => {
      await engine.append("telegram:1", [{ type: "message", role: "user", content: "hi" }]);
    });
    const run = (...args: string[]) => cli(dir, ["--data-dir", dir, "sessions", ...args]);

    const set = await run("set", "telegram:1", "model=gpt-4o", "compaction.max_messages=120", "--json");
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual([
      { name: "model", effect: "set", effective: { value: "gpt-4o", source: "session" } },
      { name: "compaction.max_messages", effect: "set", effective: { value: 120, source: "session" } },
    ]);
    let shown = JSON.parse((await run("show", "telegram:1", "--json")).stdout) as {
      session: { overrides: unknown };
    };
    expect(shown.session.overrides).toEqual({ model: "gpt-4o", "compaction.max_messages": 120 });

    // 80 is what the agent gives: setting it removes the override rather than storing a copy.
    const same = await run("set", "telegram:1", "compaction.max_messages=80");
    expect(same.stdout).toContain("compaction.max_messages override removed; now 80 (from agent)");
    const unset = await run("unset", "telegram:1", "model");
    expect(unset.code).toBe(0);
    shown = JSON.parse((await run("show", "telegram:1", "--json")).stdout) as {
      session: { overrides: unknown };
    };
    expect(shown.session.overrides).toEqual({});
  });

  it("refuses unknown names, bad values and inconsistent limits as usage errors", async () => {
    const dir = tempDir();
    await seed(dir, async (engine) => {
      await engine.append("telegram:2", [{ type: "message", role: "user", content: "hi" }]);
    });
    const run = (...args: string[]) => cli(dir, ["--data-dir", dir, "sessions", ...args]);
    const unknown = await run("set", "telegram:2", "colour=blue");
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("model");
    expect((await run("set", "telegram:2", "compaction.max_messages=lots")).code).toBe(2);
    const inconsistent = await run("set", "telegram:2", "compaction.keep_recent=60");
    expect(inconsistent.code).toBe(2);
    expect(inconsistent.stderr).toContain("keepRecent");
    expect((await run("set", "nobody:1", "model=x")).code).toBe(1);
  });
});
