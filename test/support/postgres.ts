// The throwaway cluster lives with the benchmarks (which need one too and are built); tests use the same.
export { type PostgresCluster, startPostgres } from "../../bench/postgres-cluster.js";
