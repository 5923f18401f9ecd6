import { afterAll, beforeAll } from "vitest";
import { PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { type PostgresCluster, startPostgres } from "../support/postgres.js";
import { runSearchContract } from "./search-contract.js";

let cluster: PostgresCluster;
beforeAll(async () => {
  cluster = await startPostgres();
});
afterAll(() => cluster?.remove());

// Each test's store is a database of its own on the throwaway cluster.
runSearchContract("postgres", async () => PostgresStore.open({ url: await cluster.createDatabase() }));
