import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The package's version, read from the nearest package.json (the CLI runs from src/ or dist/src/). */
export function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const file = join(dir, "package.json");
    if (existsSync(file)) {
      const pkg: unknown = JSON.parse(readFileSync(file, "utf8"));
      if (typeof pkg === "object" && pkg !== null && "name" in pkg && pkg.name === "sessiond") {
        return "version" in pkg && typeof pkg.version === "string" ? pkg.version : "unknown";
      }
    }
    const parent = dirname(dir);
    if (parent === dir) return "unknown";
    dir = parent;
  }
}
