// Bundles the built entry points (the CLI, the root export and its subpaths) into dist/bundle: one module
// graph of a few dozen chunks instead of hundreds of files, since Node's ES module loader spends most of a
// short command's start-up resolving and reading files one by one (each read is a round trip through libuv's
// thread pool). Chunks split at the dynamic imports the code already has, so a command still loads only what
// it needs. The metafile (dist/bundle/meta.json) maps each chunk to the modules inside it, for
// test/cli/lazy-load.test.ts.
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";

const root = new URL("..", import.meta.url).pathname;
const src = join(root, "dist", "src");
const out = join(root, "dist", "bundle");
const publicDir = join(src, "public");
const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));

// The CLI is an application, so the pure-JS packages it uses are bundled into it (with the packages they
// import): commander alone was 9 files read at every start, and serve read ~110 of hono, ws and the rest.
const INLINE_IN_CLI = [
  "commander",
  "ulid",
  "lru-cache",
  "hono",
  "@hono/node-server",
  "@hono/zod-openapi",
  "ws",
  "fzstd",
  "jose",
  "prom-client",
];
// Stay packages: native code (better-sqlite3), what is loaded by `require` at run time (src/model/load-sync.ts
// resolves zod, Temporal and the secret rules as `import` would: a bundled copy would be a second instance),
// pino (its transports start workers by file path), the optional peers, and ws's optional native helpers.
const EXTERNAL_IN_CLI = [
  "better-sqlite3",
  "zod",
  "temporal-polyfill",
  "yaml",
  "@secretlint/secretlint-rule-preset-recommend",
  "pino",
  // Imported only when tracing is on, beside the optional OpenTelemetry SDK peers, which need the same instance.
  "@opentelemetry/api",
  ...Object.keys(manifest.peerDependencies ?? {}),
  "bufferutil",
  "utf-8-validate",
];
const unclassified = Object.keys(manifest.dependencies).filter(
  (name) => !INLINE_IN_CLI.includes(name) && !EXTERNAL_IN_CLI.includes(name),
);
if (unclassified.length > 0)
  throw new Error(`scripts/bundle.mjs: bundle or keep external in the CLI? ${unclassified.join(", ")}`);

// The library bundles only the packages no caller could share an instance with (ids, a cache, a decoder).
const INLINE_IN_LIBRARY = ["ulid", "lru-cache", "fzstd"];

/** The package a bare import names (`@scope/name/sub` → `@scope/name`), or undefined for a path. */
function packageOf(specifier) {
  if (specifier.startsWith(".") || specifier.startsWith("/") || specifier.startsWith("node:"))
    return undefined;
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

/** Leaves as imports the packages `isExternal` names; the rest is bundled. */
const externalPackages = (isExternal) => ({
  name: "external-packages",
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      const name = packageOf(args.path);
      return name !== undefined && isExternal(name) ? { path: args.path, external: true } : undefined;
    });
  },
});

// Bundled CommonJS calls `require` for Node's built-ins; an ES module has none of its own.
const REQUIRE_BANNER =
  'import { createRequire as __sessiondCreateRequire } from "node:module"; const require = __sessiondCreateRequire(import.meta.url);';

// Three graphs, so each shares chunks only with what runs in the same process: the CLI, the library (the
// root export and its subpaths, which must share one instance of every module, and leave the other packages
// external so a caller's own hono or zod is the one sessiond uses), and the compaction worker, the SQLite store's
// writer thread and the store contract's child, each one file started by its
// path beside the chunk that starts it (compaction/thread.ts): so every output is flat in dist/bundle, and
// entry names must not clash.
const graphs = [
  {
    entryPoints: [join(src, "cli", "main.js")],
    splitting: true,
    plugins: [externalPackages((name) => EXTERNAL_IN_CLI.includes(name))],
    banner: { js: REQUIRE_BANNER },
  },
  {
    entryPoints: [
      join(src, "index.js"),
      ...readdirSync(publicDir)
        .filter((name) => name.endsWith(".js"))
        .map((name) => join(publicDir, name)),
    ],
    splitting: true,
    plugins: [externalPackages((name) => !INLINE_IN_LIBRARY.includes(name))],
  },
  {
    // The store contract's child process (store/testing/children.ts starts it by its path) imports nothing.
    entryPoints: [
      join(src, "compaction", "thread-program.js"),
      join(src, "store", "testing", "contract-child.js"),
      join(src, "store", "sqlite", "writer-thread.js"),
    ],
    splitting: false,
    packages: "external",
  },
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
    target: "node22",
    sourcemap: true,
    metafile: true,
    logLevel: "warning",
    absWorkingDir: root,
  });
  Object.assign(meta.inputs, result.metafile.inputs);
  Object.assign(meta.outputs, result.metafile.outputs);
}
writeFileSync(join(out, "meta.json"), JSON.stringify(meta));
