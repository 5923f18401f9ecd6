import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The sessiond package's root, found by walking up from `from` to the `package.json` named sessiond: code
 * runs from `dist/src/…` when built and from `src/…` under vitest, and both find the same root.
 */
export function packageRoot(from: string): string | undefined {
  let dir = dirname(fileURLToPath(from));
  for (;;) {
    const manifest = join(dir, "package.json");
    if (existsSync(manifest) && isSessiond(manifest)) return dir;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/**
 * The built JavaScript of a module next to `from` (`./name.js`): beside it when running built code, else
 * under the package's `dist/` (sources run by vitest start threads from the build). Undefined when not built.
 */
export function builtModule(from: string, name: string): string | undefined {
  const beside = fileURLToPath(new URL(`./${name}.js`, from));
  if (existsSync(beside)) return beside;
  const root = packageRoot(from);
  if (root === undefined) return undefined;
  const relative = dirname(fileURLToPath(from)).slice(root.length);
  const built = join(root, "dist", relative, `${name}.js`);
  return existsSync(built) ? built : undefined;
}

function isSessiond(manifest: string): boolean {
  try {
    return (JSON.parse(readFileSync(manifest, "utf8")) as { name?: unknown }).name === "sessiond";
  } catch {
    return false;
  }
}
