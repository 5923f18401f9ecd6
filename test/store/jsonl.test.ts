import { readdirSync, readFileSync, truncateSync } from "node:fs";
import { join } from "node:path";
import { runStoreContract } from "../../src/public/store-testing.js";
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";
import { openStore, type StoreConfig } from "../../src/store/open.js";
import { FaultFs } from "./fault-fs.js";
import { answerOf, type FaultyWriter, faultInit } from "./fault-writer.js";
import { configChild } from "./open-config.js";

const path = (dir: string) => join(dir, "sessions");

/** After a crash every line but a torn last one parses, and every file starts with its metadata line. */
function verifyFiles(dir: string): void {
  for (const name of readdirSync(path(dir)).filter((n) => n.endsWith(".jsonl"))) {
    const lines = readFileSync(join(path(dir), name), "utf8").split("\n");
    const complete = lines.slice(0, -1);
    for (const [i, line] of complete.entries()) {
      try {
        JSON.parse(line);
      } catch {
        throw new Error(`${name} line ${i + 1} does not parse: ${line.slice(0, 80)}`);
      }
    }
    if (complete.length > 0 && !JSON.parse(complete[0]!).agent) throw new Error(`${name}: no metadata line`);
  }
}

const config = (dir: string): StoreConfig => ({ backend: "jsonl", path: path(dir) });
runStoreContract({
  name: "jsonl",
  persistent: true,
  open: (dir) => openStore(config(dir)),
  child: (dir) => configChild(config(dir)),
  // Two processes may write one directory, each its own keys (docs/stores.md).
  secondProcess: { sharedKeys: false },
  verifyFiles,
  faults: {
    eio: async (dir) => faultyWriter(path(dir), "eio"),
    enospc: async (dir) => faultyWriter(path(dir), "enospc"),
    // Before its first checkpoint (20 sessions, well under the journal's limit) the store has fsync'd no
    // session file: a power cut may take all of their bytes; only the journal's are safe.
    powerCut: (dir) => {
      for (const name of readdirSync(path(dir)).filter((n) => n.endsWith(".jsonl")))
        truncateSync(join(path(dir), name), 0);
    },
  },
});

/** A writer in this process over the fault file layer (fault-fs.ts), which passes everything else on. */
function faultyWriter(dir: string, kind: "eio" | "enospc"): FaultyWriter {
  const fault = new FaultFs(dir);
  const store = new JsonlStore({ path: dir, fs: fault.fs });
  return {
    append: (key, content) =>
      store
        .append(key, [{ type: "message", role: "user", content }], { init: faultInit, durability: "strict" })
        .then(({ entries }) => ({ id: entries[0]!.id }), answerOf),
    fail: () => {
      fault.faults =
        kind === "eio"
          ? { eioAtFsync: fault.fsyncs + 1 }
          : { enospcAtWrite: fault.writes + 1, enospcWrites: Number.MAX_SAFE_INTEGER };
    },
    heal: () => {
      fault.faults = {};
    },
    close: () => store.close().catch(() => undefined),
  };
}
