import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { runStoreContract } from "../../src/public/store-testing.js";
import { openStore, type StoreConfig } from "../../src/store/open.js";
import { enospcFaultEnv, fsyncFaultEnv } from "../support/fsync-faults.js";
import { childFaultyWriter } from "./fault-writer.js";
import { configChild } from "./open-config.js";

const path = (dir: string) => join(dir, "sessiond.db");

function verifyFiles(dir: string): void {
  const db = new Database(path(dir));
  try {
    const result = db.pragma("integrity_check", { simple: true });
    if (result !== "ok") throw new Error(`integrity_check: ${String(result)}`);
  } finally {
    db.close();
  }
}

// Busy batches write through the journal and are folded into `entries` later; run everything with the
// defaults, and with every write through the journal and a fold every few rows (reads straddle both
// tables, folds land mid-test).
for (const [name, extra] of [
  ["sqlite", {}],
  [
    "sqlite, every write through the journal, folded every 3 rows",
    { foldThreshold: 3, idleFoldMs: 1, journalMinBatch: 1 },
  ],
] as const) {
  const config = (dir: string): StoreConfig => ({ backend: "sqlite", path: path(dir), ...extra });
  runStoreContract({
    name,
    persistent: true,
    open: (dir) => openStore(config(dir)),
    child: (dir) => configChild(config(dir)),
    secondProcess: { sharedKeys: true },
    verifyFiles,
    faults: {
      // SQLite fsyncs inside the library: the writer runs in a child under the LD_PRELOAD fault layer.
      eio: async (dir) => {
        const arm = join(dir, "fail-fsyncs");
        return childFaultyWriter(config(dir), fsyncFaultEnv(`${path(dir)}-wal`, arm), {
          arm: () => writeFileSync(arm, ""),
          disarm: () => rmSync(arm, { force: true }),
        });
      },
      // A full disk: writes to the WAL fail with ENOSPC (SQLite answers SQLITE_FULL).
      enospc: async (dir) => {
        const arm = join(dir, "disk-full");
        return childFaultyWriter(config(dir), enospcFaultEnv(`${path(dir)}-wal`, arm), {
          arm: () => writeFileSync(arm, ""),
          disarm: () => rmSync(arm, { force: true }),
        });
      },
    },
  });
}
