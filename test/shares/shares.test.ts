import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll } from "vitest";
import type { EngineConfig } from "../../src/config/engine-config.js";
import { createEngine, type Engine } from "../../src/engine.js";
import { type PostgresCluster, startPostgres } from "../support/postgres.js";
import { sharesContract } from "./contract.js";

const engines: Engine[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const base = { lifecycle: { sweepIntervalMs: 0 }, titles: { enabled: false } } as const;
async function engineOn(config: EngineConfig): Promise<Engine> {
  const engine = await createEngine({ ...base, ...config });
  engines.push(engine);
  return engine;
}

/** A backend on files: `again` is a second engine on the same directory, as a CLI command beside `serve`. */
function onFiles(store: (dir: string) => EngineConfig["store"]) {
  let config: EngineConfig = {};
  return {
    open: () => {
      const dir = mkdtempSync(join(tmpdir(), "sessiond-shares-"));
      dirs.push(dir);
      config = { dataDir: dir, store: store(dir) };
      return engineOn(config);
    },
    again: () => engineOn(config),
  };
}

sharesContract(
  "SQLite",
  onFiles((dir) => ({ backend: "sqlite", path: join(dir, "sessiond.db") })),
);
sharesContract(
  "JSONL",
  onFiles((dir) => ({ backend: "jsonl", path: join(dir, "sessions") })),
);

let cluster: PostgresCluster | undefined;
beforeAll(async () => {
  cluster = await startPostgres();
});
afterAll(async () => {
  await cluster?.remove();
});
let url = "";
sharesContract("PostgreSQL", {
  open: async () => {
    url = await cluster!.createDatabase();
    return engineOn({ store: { backend: "postgres", url } });
  },
  again: () => engineOn({ store: { backend: "postgres", url } }),
});
