import { resolve } from "node:path";
import type { Command } from "commander";
import type { EngineConfig } from "../../config/engine-config.js";
import { type GlobalOptions, loadCliConfig } from "../context.js";
import { CliError } from "../errors.js";
import type { CliIo } from "../io.js";

type Where =
  | { backend: "sqlite" | "jsonl"; path: string }
  | { backend: "postgres" | "memory" | "custom"; path?: undefined };

function storeOf(config: EngineConfig & { dataDir: string }): Where {
  const store = config.store;
  if (!store) return { backend: "sqlite", path: resolve(config.dataDir, "sessiond.db") };
  if ("append" in store) return { backend: "custom" };
  if (store.backend === "sqlite" || store.backend === "jsonl")
    return { backend: store.backend, path: store.path };
  return { backend: store.backend };
}

function unsupported(where: Where, verb: "back up" | "restore"): CliError {
  if (where.backend === "postgres") {
    return new CliError(
      verb === "back up"
        ? "the PostgreSQL store is backed up with PostgreSQL's own tool: pg_dump --format=custom --file <file> <database url>"
        : "the PostgreSQL store is restored with PostgreSQL's own tool: pg_restore --clean --dbname <database url> <file>",
    );
  }
  if (where.backend === "jsonl") {
    // Not yet a consistent online tarball: the directory is copied whole while no gateway writes to it.
    return new CliError(
      verb === "back up"
        ? `the JSONL store is backed up as its directory: stop the gateway, then tar -C ${where.path} -czf <file> .`
        : `the JSONL store is restored as its directory: stop the gateway, then tar -C ${where.path} -xzf <file>`,
    );
  }
  return new CliError(`the ${where.backend} store keeps nothing on disk to ${verb}`);
}

export function registerBackup(program: Command, io: CliIo): void {
  program
    .command("backup")
    .description(
      "write a consistent copy of the store to <file> while the gateway runs (SQLite; PostgreSQL: pg_dump)",
    )
    .argument("<file>", "where the copy goes (replaced only once it is whole)")
    .action(async (file: string, _options: unknown, command: Command) => {
      const { config } = loadCliConfig(command.optsWithGlobals<GlobalOptions>(), io);
      const where = storeOf(config);
      const target = resolve(io.cwd, file);
      if (where.backend !== "sqlite") throw unsupported(where, "back up");
      const { backupSqlite } = await import("../backup/sqlite.js");
      const { pages } = await backupSqlite(where.path, target);
      io.stdout(`backed up ${where.path} to ${target} (${pages} pages)\n`);
    });
  program
    .command("restore")
    .description(
      "put a backup in place of the store (stop the gateway first); what was there is kept beside it",
    )
    .argument("<file>", "a file written by sessiond backup")
    .action(async (file: string, _options: unknown, command: Command) => {
      const { config } = loadCliConfig(command.optsWithGlobals<GlobalOptions>(), io);
      const where = storeOf(config);
      if (where.backend !== "sqlite") throw unsupported(where, "restore");
      const { restoreSqlite } = await import("../backup/sqlite.js");
      const backup = resolve(io.cwd, file);
      const { aside } = await restoreSqlite(backup, where.path, new Date());
      io.stdout(`restored ${where.path} from ${backup}\n`);
      if (aside) io.stdout(`the database it replaced is kept as ${aside}\n`);
    });
}
