import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { anchorsOf, checkLinks, documentationFiles } from "../../scripts/docs/check-links.js";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "sessiond-links-"));
  dirs.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe("README and docs links", () => {
  it("every link of the README and docs/ resolves, to a file and to a heading in it", () => {
    expect(documentationFiles(".").length).toBeGreaterThan(10);
    expect(checkLinks(".")).toEqual([]);
  });

  it("the front door stays a front door: at most 300 lines", async () => {
    const { readFileSync } = await import("node:fs");
    expect(readFileSync("README.md", "utf8").split("\n").length).toBeLessThanOrEqual(300);
  });

  it("names each broken link with its file and line: a missing page, a missing heading, an anchor alone", () => {
    const root = tree({
      "README.md":
        "# Top\n\n[ok](docs/a.md#two-words)\n[gone](docs/missing.md)\n[bad](docs/a.md#nope)\n[self](#top)\n[self bad](#bottom)\n",
      "docs/a.md":
        "# A\n\n## Two `words`!\n\n```sh\n[in code](nowhere.md)\n# not a heading\n```\n[up](../README.md#top)\n",
    });
    expect(checkLinks(root)).toEqual([
      { file: "README.md", line: 4, target: "docs/missing.md", reason: "docs/missing.md does not exist" },
      { file: "README.md", line: 5, target: "docs/a.md#nope", reason: "docs/a.md has no heading #nope" },
      { file: "README.md", line: 7, target: "#bottom", reason: "README.md has no heading #bottom" },
    ]);
  });

  it("spells anchors as GitHub does, repeats numbered", () => {
    expect([
      ...anchorsOf("# JSONL (CrabTalk's format)\n## Reset, retention; overrides\n## Notes\n## Notes\n"),
    ]).toEqual(["jsonl-crabtalks-format", "reset-retention-overrides", "notes", "notes-1"]);
  });
});
