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
    return { backend: store.backend, path: resolve(config.dataDir, store.path) };
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
  return new CliError(`the ${where.backend} store keeps nothing on disk to ${verb}`);
}

export function registerBackup(program: Command, io: CliIo): void {
  program
    .command("backup")
    .description(
      "write a consistent copy of the store to <file> while the gateway runs (SQLite: a database; JSONL: a gzipped tar; PostgreSQL: pg_dump)",
    )
    .argument("<file>", "where the copy goes (replaced only once it is whole)")
    .action(async (file: string, _options: unknown, command: Command) => {
      const { config } = loadCliConfig(command.optsWithGlobals<GlobalOptions>(), io);
      const where = storeOf(config);
      const target = resolve(io.cwd, file);
      if (where.backend === "jsonl") {
        const { backupJsonl } = await import("../backup/jsonl.js");
        const copy = await backupJsonl(where.path, config.dataDir, target, io.env);
        const from = copy.gateway ? `taken by the gateway at ${copy.gateway}` : "no gateway was running";
        io.stdout(
          `backed up ${where.path} to ${target} (${copy.files} files as of ${copy.takenAt}; ${from})\n`,
        );
        return;
      }
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
      const backup = resolve(io.cwd, file);
      if (where.backend === "jsonl") {
        const { restoreJsonl } = await import("../backup/jsonl.js");
        const done = await restoreJsonl(backup, where.path, config.dataDir, new Date());
        io.stdout(`restored ${where.path} from ${backup} (${done.files} files as of ${done.takenAt})\n`);
        if (done.aside) io.stdout(`the directory it replaced is kept as ${done.aside}\n`);
        return;
      }
      if (where.backend !== "sqlite") throw unsupported(where, "restore");
      const { restoreSqlite } = await import("../backup/sqlite.js");
      const { aside } = await restoreSqlite(backup, where.path, new Date());
      io.stdout(`restored ${where.path} from ${backup}\n`);
      if (aside) io.stdout(`the database it replaced is kept as ${aside}\n`);
    });
}
