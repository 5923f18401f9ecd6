import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe } from "vitest";
import type { StoreDriver } from "../driver.js";
import { LogStore } from "../log-store.js";
import type { Store } from "../store.js";
import { branchCases } from "./cases-branches.js";
import { crashCases } from "./cases-crash.js";
import { erasureCases } from "./cases-erasure.js";
import { faultCases } from "./cases-faults.js";
import { lifecycleCases } from "./cases-lifecycle.js";
import { processCases } from "./cases-processes.js";
import { sessionCases } from "./cases-sessions.js";
import { writeCases } from "./cases-writes.js";
import type { StoreFactory } from "./factory.js";
import type { Harness, OpenedFactory } from "./fixtures.js";

/**
 * The store contract: what every backend must do, as vitest cases (call it at the top level of a test
 * file). Each case opens a fresh store in a temporary directory through `factory.open` (a driver it
 * returns is run by a `LogStore`) and closes it
 * afterwards; the cases that need a child process, a fault or a second process run where the factory
 * gives them (factory.ts).
 */
export function runStoreContract(given: StoreFactory): void {
  const factory: OpenedFactory = { ...given, open: async (dir) => asStore(await given.open(dir)) };
  describe(`Store contract: ${factory.name}`, () => {
    const t = {} as Harness;

    beforeEach(async () => {
      t.dir = mkdtempSync(join(tmpdir(), `sessiond-${factory.name.replace(/[^\w-]+/g, "-")}-`));
      t.store = await factory.open(t.dir);
    });

    afterEach(async () => {
      await t.store.close();
      rmSync(t.dir, { recursive: true, force: true });
    });

    writeCases(t);
    sessionCases(t);
    lifecycleCases(t, factory);
    crashCases(t, factory);
    faultCases(t, factory);
    processCases(t, factory);
    branchCases(t, factory);
    erasureCases(t, factory);
  });
}

/** A driver is run by the log core, as every built-in backend is; a store is taken as it is. */
function asStore(opened: Store | StoreDriver): Store {
  return "append" in opened ? opened : new LogStore(opened);
}
