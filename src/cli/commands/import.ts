import { resolve } from "node:path";
import { type Command, Option } from "commander";
import { IMPORT_SOURCES, type ImportProblem, type ImportSource } from "../../import/types.js";
import { type GlobalOptions, withEngine } from "../context.js";
import { progressReporter } from "../format/progress.js";
import type { CliIo } from "../io.js";

interface ImportOptions extends GlobalOptions {
  from: ImportSource;
  dryRun?: boolean;
  agent?: string;
  json?: boolean;
}

export function registerImport(program: Command, io: CliIo): void {
  program
    .command("import")
    .description(
      "bring in the sessions another gateway keeps on disk (idempotent: a second run adds nothing)",
    )
    .addOption(
      new Option("--from <system>", "the system that wrote them")
        .choices(IMPORT_SOURCES)
        .makeOptionMandatory(),
    )
    .argument("<path>", "its sessions directory, sessions.json, or SQLite file")
    .option("--dry-run", "only report what would come in")
    .option(
      "--agent <id>",
      "the agent for systems whose files name none (zeroclaw, nanobot, picoclaw)",
      "main",
    )
    .option("--json", "print the report as JSON")
    .action(async (path: string, _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<ImportOptions>();
      const dryRun = options.dryRun === true;
      const [{ importSessions }, { readSource }] = await Promise.all([
        import("../../import/importer.js"),
        import("../../import/read-source.js"),
      ]);
      const read = readSource(options.from, resolve(io.cwd, path), { agent: options.agent ?? "main" });
      const progress = progressReporter(
        io.stderr,
        io.stderrIsTTY === true,
        dryRun ? "checking" : "importing",
      );
      const report = await withEngine(options, io, { readOnly: dryRun }, (engine) =>
        importSessions(engine.store, options.from, read, { dryRun, onProgress: progress }),
      );
      if (options.json) {
        io.stdout(`${JSON.stringify(report, null, 2)}\n`);
        return;
      }
      for (const problem of report.problems) io.stderr(`warning: ${where(problem)}: ${problem.reason}\n`);
      const verb = dryRun ? "would import" : "imported";
      io.stdout(
        `read ${report.read} sessions from ${options.from}; ${verb} ${report.imported.sessions} sessions ` +
          `(${report.imported.entries} entries); ${report.alreadyThere} already there; ` +
          `${report.problems.length} problems; ${report.toolResultsDropped} tool results left out\n`,
      );
    });
}

function where(problem: ImportProblem): string {
  if (problem.line !== undefined) return `${problem.file}:${problem.line}`;
  if (problem.row !== undefined) return `${problem.file} (${problem.row})`;
  return problem.file;
}
