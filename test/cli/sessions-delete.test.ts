import { describe, expect, it } from "vitest";
import { cli, seed, useTempDir } from "./helpers.js";

const tempDir = useTempDir();

async function seedTwoGenerations(dir: string): Promise<void> {
  await seed(dir, async (engine) => {
    await engine.append("telegram:1", [
      { type: "message", role: "user", content: "a" },
      { type: "message", role: "assistant", content: "b" },
    ]);
    await engine.reset("telegram:1");
    await engine.append("telegram:1", [{ type: "message", role: "user", content: "c" }]);
    await engine.append("telegram:2", [{ type: "message", role: "user", content: "keep me" }]);
  });
}

describe("sessiond sessions delete", () => {
  it("deletes every generation with --yes and says what it deleted", async () => {
    const dir = tempDir();
    await seedTwoGenerations(dir);
    const result = await cli(dir, ["--data-dir", dir, "sessions", "delete", "telegram:1", "--yes"]);
    expect(result).toMatchObject({ code: 0, stdout: 'deleted "telegram:1": 2 sessions, 4 entries\n' });
    const gone = await cli(dir, ["--data-dir", dir, "sessions", "show", "telegram:1"]);
    expect(gone.code).toBe(1);
    const kept = await cli(dir, ["--data-dir", dir, "sessions", "show", "telegram:2"]);
    expect(kept.code).toBe(0);
  });

  it("refuses without --yes when stdin is not a terminal, and deletes nothing", async () => {
    const dir = tempDir();
    await seedTwoGenerations(dir);
    // Even a "y" piped in must not count as confirmation.
    const result = await cli(dir, ["--data-dir", dir, "sessions", "delete", "telegram:1"], { stdin: "y\n" });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toMatch(/^error: .*pass --yes/);
    const still = await cli(dir, ["--data-dir", dir, "sessions", "show", "telegram:1"]);
    expect(still.code).toBe(0);
  });

  it("fails with SESSION_NOT_FOUND for a key that has no sessions", async () => {
    const dir = tempDir();
    await seedTwoGenerations(dir);
    const result = await cli(dir, ["--data-dir", dir, "sessions", "delete", "telegram:404", "--yes"]);
    expect(result).toMatchObject({
      code: 1,
      stdout: "",
      stderr: 'error [SESSION_NOT_FOUND]: no session for key "telegram:404"\n',
    });
  });
});
