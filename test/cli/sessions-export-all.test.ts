import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { safeFileStem } from "../../src/keys/index.js";
import { cli, seed, useTempDir } from "./helpers.js";

const tempDir = useTempDir();
const init = (createdBy: string) => ({ agent: "main", channel: "telegram", createdBy });

const exportAll = (dir: string, ...rest: string[]) =>
  cli(dir, ["--data-dir", dir, "sessions", "export", "--all-sessions", ...rest]);

describe("sessiond sessions export --all-sessions", () => {
  it("writes every key, all generations, one file per key, in the format asked", async () => {
    const dir = tempDir();
    await seed(dir, async (engine) => {
      await engine.append("telegram:1", [{ type: "message", role: "user", content: "one" }], {
        init: init("1"),
      });
      await engine.append("telegram:2", [{ type: "message", role: "user", content: "two" }], {
        init: init("2"),
      });
      await engine.reset("telegram:2");
      await engine.append("telegram:2", [{ type: "message", role: "user", content: "two again" }]);
    });
    const result = await exportAll(dir, "--format", "jsonl", "--output", "out");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("exported 2 keys (4 entries)");
    const names = readdirSync(join(dir, "out")).sort();
    expect(names).toEqual(
      [`${safeFileStem("telegram:1")}.jsonl`, `${safeFileStem("telegram:2")}.jsonl`].sort(),
    );
    const two = readFileSync(join(dir, "out", `${safeFileStem("telegram:2")}.jsonl`), "utf8")
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(two[0]).toMatchObject({ agent: "main", key: "telegram:2", generation: 2 });
    expect(two.slice(1).map((l) => l.content ?? l.type)).toEqual(["two", "reset", "two again"]);

    const md = await exportAll(dir, "--format", "md", "--output", "md");
    expect(md.code).toBe(0);
    expect(readFileSync(join(dir, "md", `${safeFileStem("telegram:1")}.md`), "utf8")).toContain("one");

    const noDir = await exportAll(dir, "--format", "json");
    expect(noDir.code).toBe(2);
    expect(noDir.stderr).toContain("--output");
    const both = await cli(dir, ["--data-dir", dir, "sessions", "export", "telegram:1", "--all-sessions"]);
    expect(both.code).toBe(2);
  });
});
