import type { Command } from "commander";
import { validateKey } from "../../keys/index.js";
import { type GlobalOptions, withEngine } from "../context.js";
import type { CliIo } from "../io.js";

interface ResetOptions extends GlobalOptions {
  json?: boolean;
}

export function registerReset(sessions: Command, io: CliIo): void {
  sessions
    .command("reset")
    .description("archive the key's current session and start a new one (the old one stays readable)")
    .argument("<key>", "session key")
    .option("--json", "print the archived and the new session as JSON")
    .action(async (key: string, _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<ResetOptions>();
      validateKey(key);
      const result = await withEngine(options, io, { readOnly: false }, (engine) =>
        engine.reset(key, "manual"),
      );
      if (options.json) {
        io.stdout(`${JSON.stringify({ archived: result.archived, current: result.current }, null, 2)}\n`);
        return;
      }
      io.stdout(
        `reset ${JSON.stringify(key)}: generation ${result.archived.generation} (${result.archived.id}) archived, ` +
          `generation ${result.current.generation} (${result.current.id}) started\n`,
      );
    });
}
