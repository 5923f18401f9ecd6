import { Command } from "commander";
import { registerAgents } from "./commands/agents.js";
import { registerImport } from "./commands/import.js";
import { registerRoute } from "./commands/route.js";
import { registerSearch } from "./commands/search.js";
import { registerServe } from "./commands/serve.js";
import { registerSessions } from "./commands/sessions.js";
import { EXIT_CODES_HELP, EXIT_OK, reportError } from "./errors.js";
import type { CliIo } from "./io.js";
import { packageVersion } from "./version.js";

/** The `sessiond` command. Settings are set before subcommands are added, which copy them. */
export function buildProgram(io: CliIo): Command {
  const program = new Command("sessiond")
    .description("sessiond: the session layer for AI agent gateways")
    .version(packageVersion(), "-V, --version")
    .option("--config <file>", "config file (default: $SESSIOND_CONFIG, else ./sessiond.yaml if present)")
    .option("--data-dir <dir>", "data directory; overrides the config file and $SESSIOND_DATA_DIR")
    .exitOverride()
    .configureOutput({ writeOut: (text) => io.stdout(text), writeErr: (text) => io.stderr(text) })
    .showHelpAfterError("(add --help for usage)")
    .configureHelp({ showGlobalOptions: true })
    .addHelpText("afterAll", `\n${EXIT_CODES_HELP}\n`);
  registerRoute(program, io);
  registerSessions(program, io);
  registerSearch(program, io);
  registerServe(program, io);
  registerAgents(program, io);
  registerImport(program, io);
  return program;
}

/** Runs one command line and returns the exit code; never throws. */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const program = buildProgram(io);
  if (argv.length === 0) {
    program.outputHelp();
    return EXIT_OK;
  }
  try {
    await program.parseAsync([...argv], { from: "user" });
    return EXIT_OK;
  } catch (error) {
    return reportError(error, io);
  }
}
