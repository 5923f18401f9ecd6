import { createInterface } from "node:readline";
import type { Command } from "commander";
import { validateKey } from "../../keys/index.js";
import { sessionNotFound } from "../../store/session-log.js";
import { type GlobalOptions, withEngine } from "../context.js";
import { AbortedError, UsageError } from "../errors.js";
import { plural } from "../format/plural.js";
import type { CliIo } from "../io.js";

interface DeleteOptions extends GlobalOptions {
  yes?: boolean;
}

export function registerDelete(sessions: Command, io: CliIo): void {
  sessions
    .command("delete")
    .description("delete every generation of a key and all its entries")
    .argument("<key>", "session key")
    .option("--yes", "delete without asking (required when stdin is not a terminal)")
    .action(async (key: string, _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<DeleteOptions>();
      validateKey(key);
      if (!options.yes && !io.stdinIsTTY) {
        throw new UsageError("refusing to delete without confirmation: stdin is not a terminal; pass --yes");
      }
      const result = await withEngine(options, io, { readOnly: true }, async (engine) => {
        if (!options.yes) {
          const generations = await engine.sessions.generations(key);
          if (generations.length === 0) throw sessionNotFound(key);
          const entries = generations.reduce((n, s) => n + s.entryCount, 0);
          const question = `Delete ${JSON.stringify(key)}: ${plural(generations.length, "session")}, ${plural(entries, "entry", "entries")}? [y/N] `;
          if (!(await confirm(io, question))) throw new AbortedError("nothing was deleted");
        }
        return engine.delete(key);
      });
      io.stdout(
        `deleted ${JSON.stringify(key)}: ${plural(result.sessions, "session")}, ${plural(result.entries, "entry", "entries")}\n`,
      );
    });
}

async function confirm(io: CliIo, question: string): Promise<boolean> {
  // The question goes to stderr so stdout carries only the result; end of input counts as no.
  io.stderr(question);
  const rl = createInterface({ input: io.stdin, terminal: false });
  try {
    const answer = await new Promise<string>((resolve) => {
      rl.once("line", resolve);
      rl.once("close", () => resolve(""));
    });
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}
