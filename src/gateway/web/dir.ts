import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Where `npm run build` puts the dashboard: `dist/web` under the package root, found by walking up from
 * this file (it runs from `dist/src/gateway/web` when built and from `src/gateway/web` under vitest).
 */
export function defaultWebDir(from: string = import.meta.url): string | undefined {
  let dir = dirname(fileURLToPath(from));
  for (;;) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest) && isSessiond(manifest)) return join(dir, "dist", "web");
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** What `sessiond serve` says about the dashboard at start-up. */
export function dashboardLine(url: string, dir = defaultWebDir()): string {
  return dir && existsSync(join(dir, "index.html"))
    ? `dashboard: ${url}/`
    : "dashboard: not built (run npm run build)";
}

function isSessiond(manifest: string): boolean {
  try {
    return (JSON.parse(readFileSync(manifest, "utf8")) as { name?: unknown }).name === "sessiond";
  } catch {
    return false;
  }
}
