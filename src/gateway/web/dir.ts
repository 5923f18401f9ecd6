import { existsSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../../config/package-root.js";

/** Where `npm run build` puts the dashboard: `dist/web` under the package root. */
export function defaultWebDir(from: string = import.meta.url): string | undefined {
  const root = packageRoot(from);
  return root === undefined ? undefined : join(root, "dist", "web");
}

/** What `sessiond serve` says about the dashboard at start-up. */
export function dashboardLine(url: string, dir = defaultWebDir()): string {
  return dir && existsSync(join(dir, "index.html"))
    ? `dashboard: ${url}/`
    : "dashboard: not built (run npm run build)";
}
