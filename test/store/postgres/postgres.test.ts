import { afterAll, beforeAll } from "vitest";
import { runStoreContract } from "../../../src/public/store-testing.js";
import { openStore, type StoreConfig } from "../../../src/store/open.js";
import { type PostgresCluster, startPostgres } from "../../support/postgres.js";
import { configChild } from "../open-config.js";

let cluster: PostgresCluster;
beforeAll(async () => {
  cluster = await startPostgres();
});
afterAll(() => cluster?.remove());

// The contract opens a store "in a directory": here each directory is a database of its own.
const databases = new Map<string, string>();
const config = async (dir: string): Promise<StoreConfig> => {
  let url = databases.get(dir);
  if (!url) {
    url = await cluster.createDatabase();
    databases.set(dir, url);
  }
  return { backend: "postgres", url };
};

runStoreContract({
  name: "postgres",
  persistent: true,
  open: async (dir) => openStore(await config(dir)),
  // The store was opened in this dir before the crash test asks, so its database is known.
  child: (dir) => configChild({ backend: "postgres", url: databases.get(dir) }),
  secondProcess: { sharedKeys: true },
});
