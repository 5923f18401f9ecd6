import { execFileSync } from "node:child_process";
import { appendFileSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { useTempDir } from "./helpers.js";

const SCRIPT = resolve("scripts/build-if-stale.mjs");
const tempDir = useTempDir();

describe("npm start", () => {
  it("builds only when a source is newer than the last build", () => {
    const root = tempDir();
    mkdirSync(join(root, "src"));
    writeFileSync(join(root, "src", "a.ts"), "export {};\n");
    // A project whose build records each run and stamps, as sessiond's `npm run build` does.
    const build = `node -e "require('fs').appendFileSync('builds', 'x')" && node ${JSON.stringify(SCRIPT)} --stamp`;
    writeFileSync(join(root, "package.json"), JSON.stringify({ name: "p", scripts: { build } }));
    const start = () =>
      execFileSync(process.execPath, [SCRIPT], {
        cwd: root,
        env: { ...process.env, SESSIOND_BUILD_ROOT: root },
        encoding: "utf8",
      });
    const builds = () => readFileSync(join(root, "builds"), "utf8").length;

    expect(start()).toContain("building (first start)");
    expect(builds()).toBe(1);
    expect(start()).toContain("the build is current");
    expect(builds()).toBe(1);

    const later = new Date(Date.now() + 60_000);
    appendFileSync(join(root, "src", "a.ts"), "// changed\n");
    utimesSync(join(root, "src", "a.ts"), later, later);
    expect(start()).toContain("sources changed since the last build, rebuilding");
    expect(builds()).toBe(2);
  });
});
