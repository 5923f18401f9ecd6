import { describe, expect, it } from "vitest";
import { cli, seed, useTempDir } from "./helpers.js";

const tempDir = useTempDir();

describe("sessiond sessions reset", () => {
  it("archives the current generation and starts the next, keeping the old one readable", async () => {
    const dir = tempDir();
    await seed(dir, async (engine) => {
      await engine.append("telegram:1", [{ type: "message", role: "user", content: "before the reset" }]);
    });
    const result = await cli(dir, ["--data-dir", dir, "sessions", "reset", "telegram:1", "--json"]);
    expect(result.code).toBe(0);
    const { archived, current } = JSON.parse(result.stdout) as {
      archived: { generation: number; state: string };
      current: { generation: number; entryCount: number };
    };
    expect(archived).toMatchObject({ generation: 1, state: "archived" });
    expect(current).toMatchObject({ generation: 2, entryCount: 0 });
    const shown = await cli(dir, ["--data-dir", dir, "sessions", "show", "telegram:1", "--all", "--json"]);
    const body = JSON.parse(shown.stdout) as {
      entries: Array<{ type: string; cause?: string; content?: string }>;
    };
    expect(body.entries.map((e) => e.content ?? e.cause)).toEqual(["before the reset", "manual"]);
  });

  it("fails with SESSION_NOT_FOUND for an unknown key", async () => {
    const dir = tempDir();
    const result = await cli(dir, ["--data-dir", dir, "sessions", "reset", "nobody:1"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("SESSION_NOT_FOUND");
  });
});
