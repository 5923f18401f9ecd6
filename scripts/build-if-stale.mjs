// `npm start` builds only when a source is newer than the last build: a current build starts in about a
// second instead of rebuilding for 17-22 s. `npm run build` writes the stamp this compares against.
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";

// SESSIOND_BUILD_ROOT lets the test point it at a project of its own.
const root = process.env.SESSIOND_BUILD_ROOT ?? new URL("..", import.meta.url).pathname;
const STAMP = join(root, "dist", ".build-stamp");
const SOURCES = ["src", "bench", "web", "package.json", "tsconfig.json"];

function newest(path) {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const name of readdirSync(path)) {
    if (name === "node_modules" || name === "dist") continue;
    latest = Math.max(latest, newest(join(path, name)));
  }
  return latest;
}

if (process.argv.includes("--stamp")) {
  mkdirSync(join(root, "dist"), { recursive: true });
  writeFileSync(STAMP, `${new Date().toISOString()}\n`);
  process.exit(0);
}
const built = newest(STAMP);
const changed = Math.max(...SOURCES.map((s) => newest(join(root, s))));
if (built > 0 && built >= changed) {
  console.log("sessiond: the build is current, starting it");
  process.exit(0);
}
console.log(
  built === 0
    ? "sessiond: building (first start)"
    : "sessiond: sources changed since the last build, rebuilding",
);
// The build runs on the Node running this script, not on whichever `node` comes first on PATH (npm and the
// build's own scripts start `node` from PATH): a machine's /usr/bin/node may be a line sessiond does not
// support.
const PATH = `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ""}`;
const result = spawnSync("npm", ["run", "build", "--silent"], {
  cwd: root,
  stdio: "inherit",
  env: { ...process.env, PATH },
});
process.exit(result.status ?? 1);
