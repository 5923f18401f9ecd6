import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import semver from "semver";
import { describe, expect, it } from "vitest";

interface Manifest {
  name: string;
  version: string;
  engines?: { node?: string };
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

const root = JSON.parse(readFileSync("package.json", "utf8")) as Manifest;

/** Every package a user's install runs: the dependencies, the optional peers, and all they depend on. */
function runtimePackages(): Manifest[] {
  const seen = new Map<string, Manifest>();
  const visit = (name: string, from: string) => {
    let file: string;
    try {
      file = createRequire(join(from, "noop.js")).resolve(`${name}/package.json`);
    } catch {
      return; // an optional dependency for another platform
    }
    if (seen.has(file)) return;
    const manifest = JSON.parse(readFileSync(file, "utf8")) as Manifest;
    seen.set(file, manifest);
    for (const dep of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies })) {
      visit(dep, dirname(file));
    }
  };
  // vitest is the peer of `sessiond/store/testing` alone: it runs a user's tests, on the Node it supports.
  for (const dep of Object.keys({ ...root.dependencies, ...root.peerDependencies }).filter(
    (d) => d !== "vitest",
  ))
    visit(dep, process.cwd());
  return [...seen.values()];
}

describe("engines", () => {
  const declared = root.engines?.node ?? "*";
  const lowest = semver.minVersion(declared)?.version ?? "0.0.0";

  it("declares the maintained LTS lines, 22 and 24", () => {
    expect(lowest).toBe("22.0.0");
    expect(semver.satisfies("24.0.0", declared)).toBe(true);
  });

  it("every runtime dependency supports the lowest Node the package declares, and 24", () => {
    const packages = runtimePackages();
    expect(packages.length).toBeGreaterThan(20);
    const refusing = packages
      .filter((p) => p.engines?.node !== undefined)
      .filter(
        (p) =>
          !semver.satisfies(lowest, p.engines?.node ?? "*") ||
          !semver.satisfies("24.0.0", p.engines?.node ?? "*"),
      )
      .map((p) => `${p.name}@${p.version} engines.node ${p.engines?.node}`);
    expect(refusing).toEqual([]);
  });
});
