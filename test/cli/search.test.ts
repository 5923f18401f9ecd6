import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { SearchResult } from "../../src/search/query.js";
import { cli, parseJson, seed, useTempDir } from "./helpers.js";

const tempDir = useTempDir();

async function seedChats(dataDir: string): Promise<void> {
  await seed(dataDir, async (engine) => {
    await engine.append("telegram:1", [
      { type: "message", role: "user", content: "my <tt>quokka</tt> photo", ts: Date.UTC(2026, 0, 2, 9, 30) },
    ]);
    await engine.append("telegram:2", [
      { type: "message", role: "user", content: "quokka facts", ts: Date.UTC(2026, 5, 1) },
    ]);
    await engine.append(
      "ops:slack:C1",
      [{ type: "message", role: "assistant", content: "no quokka here", ts: Date.UTC(2026, 5, 2) }],
      { init: { agent: "ops", channel: "slack", createdBy: "u1" } },
    );
  });
}

describe("sessiond search", () => {
  it("prints where each hit is and its snippet, matches in **", async () => {
    const dir = tempDir();
    const dataDir = join(dir, "data");
    await seedChats(dataDir);
    const result = await cli(dir, ["--data-dir", dataDir, "search", "quokka", "--until", "2026-02-01"]);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      "telegram:1  generation 1  #1  user  2026-01-02 09:30\n  my <tt>**quokka**</tt> photo\n",
    );
  });

  it("--json prints the hits with their HTML snippets; filters and pages", async () => {
    const dir = tempDir();
    const dataDir = join(dir, "data");
    await seedChats(dataDir);
    const ops = await cli(dir, [
      "--data-dir",
      dataDir,
      "search",
      "quokka",
      "--json",
      "--agent",
      "ops",
      "--role",
      "assistant",
    ]);
    const found = parseJson<SearchResult>(ops.stdout);
    expect(found.hits.map((h) => [h.key, h.snippet])).toEqual([
      ["ops:slack:C1", "no <mark>quokka</mark> here"],
    ]);
    const first = await cli(dir, ["--data-dir", dataDir, "search", "quokka", "--limit", "2"]);
    const more = /More matches: (.*)\n$/.exec(first.stdout)?.[1];
    expect(more).toMatch(/^sessiond --data-dir \S+ search quokka --limit 2 --cursor \S+$/);
    const cursor = more?.split(" ").at(-1) ?? "";
    const second = await cli(dir, [
      "--data-dir",
      dataDir,
      "search",
      "quokka",
      "--limit",
      "2",
      "--cursor",
      cursor,
      "--json",
    ]);
    expect(parseJson<SearchResult>(second.stdout).hits).toHaveLength(1);
  });

  it("refuses a bad filter with exit code 2", async () => {
    const dir = tempDir();
    const dataDir = join(dir, "data");
    await seedChats(dataDir);
    const result = await cli(dir, ["--data-dir", dataDir, "search", "quokka", "--since", "someday"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("since must be an ISO 8601 date");
  });
});
