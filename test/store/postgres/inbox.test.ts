import { afterAll, beforeAll } from "vitest";
import { PostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { type PostgresCluster, startPostgres } from "../../support/postgres.js";
import { inboxContract } from "../inbox-contract.js";

let cluster: PostgresCluster;
const stores: PostgresStore[] = [];
beforeAll(async () => {
  cluster = await startPostgres();
});
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await cluster?.remove();
});

// Each test's inbox in a database of its own; `reopen` opens that database again through a new store.
let url = "";
const inboxOn = async (where: string) => {
  const store = await PostgresStore.open({ url: where });
  stores.push(store);
  return store.inbox();
};

inboxContract("postgres", {
  open: async () => {
    url = await cluster.createDatabase();
    return inboxOn(url);
  },
  reopen: () => inboxOn(url),
});
