// A driver written outside this repository runs the store contract: the example driver (tally-driver.ts)
// and this file import sessiond only by its package name, which resolves to the build (package.json
// `exports`: dist/bundle, and its declarations), as it does in a user's project. Needs `npm run build`.
// tsconfig.check.json leaves this folder out: it type-checks against the build, here.
import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { join } from "node:path";
import { promisify } from "node:util";
import { openStore } from "sessiond/store";
import { runStoreContract } from "sessiond/store/testing";
import { expect, it } from "vitest";
import { openTallyStore, TallyDriver } from "./tally-driver.js";

// A driver is run by sessiond's LogStore, as the contract does with what `open` gives.
runStoreContract({ name: "a third-party driver", persistent: false, open: async () => new TallyDriver() });

// A persistent store run from the build, with the child processes the contract starts from there
// (dist/bundle/contract-child.js) opening it through a module of the user's: the SIGKILL cases and the
// second process, as a third-party store on disk would run them.
const sqlite = (dir: string) => ({ backend: "sqlite" as const, path: join(dir, "sessiond.db") });
runStoreContract({
  name: "SQLite through the package",
  persistent: true,
  open: (dir) => openStore(sqlite(dir)),
  child: (dir) => ({ module: new URL("./open-sqlite.mjs", import.meta.url).href, arg: sqlite(dir) }),
  secondProcess: { sharedKeys: true },
});

it("the contract's stores are the third-party driver's: its commits carry their writes", async () => {
  const driver = new TallyDriver();
  const store = openTallyStore(driver);
  const init = { agent: "main", channel: "cli", createdBy: "u1" };
  await Promise.all([
    store.append("k:1", [{ type: "message", role: "user", content: "a" }], { init }),
    store.append("k:2", [{ type: "message", role: "user", content: "b" }], { init }),
  ]);
  expect(store.backend).toBe("tally");
  expect(driver.groups).toBe(2);
  expect(driver.batches).toBe(1);
  await store.close();
});

it("type-checks against the package's published declarations alone", async () => {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const project = new URL("./tsconfig.json", import.meta.url).pathname;
  await expect(promisify(execFile)(process.execPath, [tsc, "-p", project])).resolves.toBeDefined();
}, 120_000);
