// A driver written outside this repository runs the store contract: the example driver (tally-driver.ts)
// and this file import sessiond only by its package name, which resolves to the build (package.json
// `exports`: dist/bundle, and its declarations), as it does in a user's project. Needs `npm run build`.
// tsconfig.check.json leaves this folder out: it type-checks against the build, here.
import { execFile } from "node:child_process";
import { createRequire } from "node:module";
import { promisify } from "node:util";
import { runStoreContract } from "sessiond/store/testing";
import { expect, it } from "vitest";
import { openTallyStore, TallyDriver } from "./tally-driver.js";

runStoreContract({ name: "a third-party driver", persistent: false, open: async () => openTallyStore() });

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
