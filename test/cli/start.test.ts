import { execFileSync } from "node:child_process";
import { appendFileSync, chmodSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import { delimiter, join, resolve } from "node:path";
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

  it("builds with the Node that runs it, not the first node on PATH (a machine's own may be too old)", () => {
    const root = tempDir();
    mkdirSync(join(root, "src"));
    writeFileSync(join(root, "src", "a.ts"), "export {};\n");
    // A `node` first on PATH that is not the one running the test, as /usr/bin/node 20 is on a machine
    // where Node 22 runs sessiond by its full path.
    const other = join(root, "other-bin");
    mkdirSync(other);
    writeFileSync(join(other, "node"), "#!/bin/sh\necho 'the other node ran' >&2\nexit 3\n");
    chmodSync(join(other, "node"), 0o755);
    const build = `node -e "require('fs').writeFileSync('built-by', process.execPath)"`;
    writeFileSync(join(root, "package.json"), JSON.stringify({ name: "p", scripts: { build } }));
    execFileSync(process.execPath, [SCRIPT], {
      cwd: root,
      env: { ...process.env, SESSIOND_BUILD_ROOT: root, PATH: `${other}${delimiter}${process.env.PATH}` },
      encoding: "utf8",
      stdio: "pipe",
    });
    expect(readFileSync(join(root, "built-by"), "utf8")).toBe(process.execPath);
  });
});
