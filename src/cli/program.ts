import { Command } from "commander";
import { type CommandTable, registerCommands } from "./command-table.js";
import { EXIT_CODES_HELP, EXIT_OK, reportError } from "./errors.js";
import type { CliIo } from "./io.js";
import { packageVersion } from "./version.js";

const COMMANDS: CommandTable = [
  [["route"], async () => (await import("./commands/route.js")).registerRoute],
  [["sessions"], async () => (await import("./commands/sessions.js")).registerSessions],
  [["search"], async () => (await import("./commands/search.js")).registerSearch],
  [
    ["serve"],
    async () => {
      const { registerServe } = await import("./commands/serve.js");
      return (program, io) => registerServe(program, io);
    },
  ],
  [["agents"], async () => (await import("./commands/agents.js")).registerAgents],
  [["import"], async () => (await import("./commands/import.js")).registerImport],
  [["doctor"], async () => (await import("./commands/doctor.js")).registerDoctor],
  [["backup", "restore"], async () => (await import("./commands/backup.js")).registerBackup],
  [["shares"], async () => (await import("./commands/shares.js")).registerShares],
  [["forget"], async () => (await import("./commands/forget.js")).registerForget],
  [["cost"], async () => (await import("./commands/cost.js")).registerCost],
];

/**
 * The `sessiond` command, with only the subcommand `argv` names when given one (every command without
 * `argv`). Settings are set before subcommands are added, which copy them.
 */
export async function buildProgram(io: CliIo, argv?: readonly string[]): Promise<Command> {
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
  await registerCommands(program, io, COMMANDS, argv, ["--config", "--data-dir"]);
  return program;
}

/** Runs one command line and returns the exit code; never throws. */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const program = await buildProgram(io, argv);
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
