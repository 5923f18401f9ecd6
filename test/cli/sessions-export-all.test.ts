import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { safeFileStem } from "../../src/keys/index.js";
import { findLatestConversation, loadContext } from "../support/crabtalk-loader.js";
import { cli, seed, useTempDir } from "./helpers.js";

const tempDir = useTempDir();
const init = (createdBy: string) => ({ agent: "main", channel: "telegram", createdBy });

const exportAll = (dir: string, ...rest: string[]) =>
  cli(dir, ["--data-dir", dir, "sessions", "export", "--all-sessions", ...rest]);

describe("sessiond sessions export --all-sessions", () => {
  it("writes every key, all generations, one file per key (jsonl: per generation, as CrabTalk names them)", async () => {
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
    // A CrabTalk sessions directory: one file per generation; CrabTalk's lookup finds each key's current one.
    const out = join(dir, "out");
    const names = readdirSync(out).sort();
    expect(names).toHaveLength(3);
    const metaOf = (name: string) =>
      JSON.parse(readFileSync(join(out, name), "utf8").split("\n")[0]!) as Record<string, string>;
    for (const [key, generation] of [
      ["telegram:1", 1],
      ["telegram:2", 2],
    ] as const) {
      const name = names.find((n) => metaOf(n).key === key && Number(metaOf(n).generation) === generation)!;
      const meta = metaOf(name);
      expect(findLatestConversation(out, meta.agent!, meta.created_by!)).toBe(join(out, name));
    }
    const latest = findLatestConversation(
      out,
      "main",
      metaOf(names.find((n) => metaOf(n).key === "telegram:2")!).created_by!,
    )!;
    expect(loadContext(latest).messages.map((m) => m.content)).toEqual(["two again"]);
    const first = names.find((n) => metaOf(n).key === "telegram:2" && Number(metaOf(n).generation) === 1)!;
    const lines = readFileSync(join(out, first), "utf8").trimEnd().split("\n").slice(1);
    expect(lines.map((l) => (JSON.parse(l) as Record<string, unknown>).content ?? "reset")).toEqual([
      "two",
      "reset",
    ]);

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
