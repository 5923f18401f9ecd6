import { existsSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeDirSync } from "../../src/fs/make-dir.js";
import { openStore } from "../../src/store/open.js";

const root = mkdtempSync(join(tmpdir(), "sessiond-make-dir-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// Each of these would spin forever in Node's own `mkdirSync(…, { recursive: true })` (the test times out).
describe("makeDirSync", () => {
  it("makes every missing ancestor, and accepts one that exists", () => {
    const dir = join(root, "a", "b", "c");
    makeDirSync(dir);
    makeDirSync(dir);
    expect(existsSync(dir)).toBe(true);
  });

  it("fails at once under /proc, where Node's recursive mkdir spins", () => {
    expect(() => makeDirSync("/proc/sessiond-test/data")).toThrow(/ENOENT/);
  });

  it("fails at once under a dangling symlink", () => {
    const link = join(root, "dangling");
    symlinkSync(join(root, "nowhere"), link);
    expect(() => makeDirSync(join(link, "data"))).toThrow(/ENOENT/);
  });

  it("fails with ENOTDIR where a file stands in the path", () => {
    writeFileSync(join(root, "file"), "");
    expect(() => makeDirSync(join(root, "file", "data"))).toThrow(
      expect.objectContaining({ code: "ENOTDIR" }),
    );
  });
});

describe("a data dir under /proc", () => {
  it.each([
    ["sqlite", { backend: "sqlite", path: "/proc/sessiond-test/sessiond.db" }],
    ["jsonl", { backend: "jsonl", path: "/proc/sessiond-test/sessions" }],
  ] as const)("is refused by the %s store with STORE_UNAVAILABLE, not a hang", async (_name, config) => {
    await expect(openStore(config)).rejects.toMatchObject({ code: "STORE_UNAVAILABLE" });
  });
});
