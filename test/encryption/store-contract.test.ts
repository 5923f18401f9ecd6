import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { runStoreContract } from "../../src/public/store-testing.js";
import { open, type SealedConfig, sealedChild } from "./open-sealed.js";

// The whole store contract (appends, resets, rekeys, forks, rewinds, crashes, a second process) on the
// encrypted SQLite and JSONL stores: the sealing driver changes nothing a store promises.
const keyBase64 = randomBytes(32).toString("base64");
// Two JSONL processes may share a directory, each its own keys (docs/stores.md), as in test/store/jsonl.test.ts.
const configs: Array<[string, (dir: string) => SealedConfig, boolean]> = [
  ["sqlite, encrypted", (dir) => ({ backend: "sqlite", path: join(dir, "sessiond.db"), keyBase64 }), true],
  ["jsonl, encrypted", (dir) => ({ backend: "jsonl", path: dir, keyBase64 }), false],
];
for (const [name, config, sharedKeys] of configs)
  runStoreContract({
    name,
    persistent: true,
    open: (dir) => open(config(dir)),
    child: (dir) => sealedChild(config(dir)),
    secondProcess: { sharedKeys },
  });
