import { describe, expect, it } from "vitest";
import { cli, seed, useTempDir } from "./helpers.js";

const tempDir = useTempDir();
const DAY = 24 * 60 * 60_000;

describe("sessiond sessions prune", () => {
  it("shows what retention would remove with --dry-run, and removes it without", async () => {
    const dir = tempDir();
    const old = Date.now() - 8 * DAY;
    await seed(dir, async (engine) => {
      await engine.append("webhook:main:alert:ts-1", [
        { type: "message", role: "user", content: "old alert", ts: old },
      ]);
      await engine.append("webhook:main:alert:ts-2", [
        { type: "message", role: "user", content: "new alert" },
      ]);
      await engine.append("telegram:1", [
        { type: "message", role: "user", content: "kept forever", ts: old },
      ]);
    });
    const run = (...args: string[]) => cli(dir, ["--data-dir", dir, "sessions", ...args]);
    const dry = await run("prune", "--dry-run");
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain("webhook-idle  webhook:main:alert:ts-1 (key)");
    expect(dry.stdout).toContain("1 would be removed");
    expect((await run("show", "webhook:main:alert:ts-1")).code).toBe(0);
    const applied = await run("prune", "--json");
    expect(JSON.parse(applied.stdout)).toMatchObject({ applied: { keys: 1 } });
    expect((await run("show", "webhook:main:alert:ts-1")).code).toBe(1);
    expect((await run("show", "webhook:main:alert:ts-2")).code).toBe(0);
    expect((await run("show", "telegram:1")).code).toBe(0);
  });
});
