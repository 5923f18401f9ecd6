import type { Command } from "commander";
import { validateKey } from "../../keys/index.js";
import { type GlobalOptions, withEngine } from "../context.js";
import type { CliIo } from "../io.js";

interface CompactOptions extends GlobalOptions {
  json?: boolean;
}

export function registerCompact(sessions: Command, io: CliIo): void {
  sessions
    .command("compact")
    .description(
      "summarise the older part of a session now; nothing is deleted (`show --all` still shows it)",
    )
    .argument("<key>", "session key")
    .option("--json", "print the compaction entry as JSON")
    .action(async (key: string, _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<CompactOptions>();
      validateKey(key);
      const result = await withEngine(options, io, { readOnly: false }, (engine) => engine.compact(key));
      if (options.json) {
        io.stdout(`${JSON.stringify(result.entry, null, 2)}\n`);
        return;
      }
      const e = result.entry;
      io.stdout(
        `compacted ${JSON.stringify(key)}: entries ${e.fromSeq}-${e.throughSeq} summarised by ${e.summarizer}` +
          `${e.model ? ` (${e.model})` : ""}, context from #${e.firstKeptSeq}, ~${e.tokensBefore} → ~${e.tokensAfter} tokens\n\n` +
          `${result.summary}\n`,
      );
    });
}
