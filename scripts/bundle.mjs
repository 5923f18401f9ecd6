// Bundles the built entry points (the CLI, the root export and its subpaths) into dist/bundle: one module
// graph of a few dozen chunks instead of hundreds of files, since Node's ES module loader spends most of a
// short command's start-up resolving and compiling files one by one. Chunks split at the dynamic imports the
// code already has, so a command still loads only what it needs; packages stay external. The metafile
// (dist/bundle/meta.json) maps each chunk to the dist/src modules inside it, for test/cli/lazy-load.test.ts.
import { readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";

const root = new URL("..", import.meta.url).pathname;
const src = join(root, "dist", "src");
const out = join(root, "dist", "bundle");
const publicDir = join(src, "public");

// Three graphs, so each shares chunks only with what runs in the same process: the CLI, the library (the
// root export and its subpaths, which must share one instance of every module), and the compaction worker,
// one file started by its path beside the chunk that starts it (compaction/thread.ts): so every output is
// flat in dist/bundle, and entry names must not clash.
const graphs = [
  { entryPoints: [join(src, "cli", "main.js")], splitting: true },
  {
    entryPoints: [
      join(src, "index.js"),
      ...readdirSync(publicDir)
        .filter((name) => name.endsWith(".js"))
        .map((name) => join(publicDir, name)),
    ],
    splitting: true,
  },
  { entryPoints: [join(src, "compaction", "thread-program.js")], splitting: false },
];

rmSync(out, { recursive: true, force: true });
const meta = { inputs: {}, outputs: {} };
for (const graph of graphs) {
  const result = await build({
    ...graph,
    outdir: out,
    entryNames: "[name]",
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    packages: "external",
    sourcemap: true,
    metafile: true,
    logLevel: "warning",
    absWorkingDir: root,
  });
  Object.assign(meta.inputs, result.metafile.inputs);
  Object.assign(meta.outputs, result.metafile.outputs);
}
writeFileSync(join(out, "meta.json"), JSON.stringify(meta));
