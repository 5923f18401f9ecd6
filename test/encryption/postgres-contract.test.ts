import { randomBytes } from "node:crypto";
import { afterAll, beforeAll } from "vitest";
import { runStoreContract } from "../../src/public/store-testing.js";
import { type PostgresCluster, startPostgres } from "../support/postgres.js";
import { open, type SealedConfig, sealedChild } from "./open-sealed.js";

// The whole store contract on PostgreSQL opened with a key, as test/store/postgres/postgres.test.ts runs it in clear.
let cluster: PostgresCluster;
beforeAll(async () => {
  cluster = await startPostgres();
}, 120_000);
afterAll(() => cluster?.remove());

const keyBase64 = randomBytes(32).toString("base64");
// The contract opens a store "in a directory": here each directory is a database of its own.
const databases = new Map<string, string>();
const config = async (dir: string): Promise<SealedConfig> => {
  let url = databases.get(dir);
  if (!url) {
    url = await cluster.createDatabase();
    databases.set(dir, url);
  }
  return { backend: "postgres", url, keyBase64 };
};

runStoreContract({
  name: "postgres, encrypted",
  persistent: true,
  open: async (dir) => open(await config(dir)),
  child: (dir) => sealedChild({ backend: "postgres", url: databases.get(dir) ?? "", keyBase64 }),
  secondProcess: { sharedKeys: true },
});
