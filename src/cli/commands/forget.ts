import type { Command } from "commander";
import { type GlobalOptions, withEngine } from "../context.js";
import { UsageError } from "../errors.js";
import { plural } from "../format/plural.js";
import type { CliIo } from "../io.js";

interface ForgetOptions extends GlobalOptions {
  subject?: string;
  yes?: boolean;
  json?: boolean;
}

/** `forget --subject ID --yes`: erasure by subject (src/lifecycle/subject-erasure.ts, docs/erasure.md). */
export function registerForget(program: Command, io: CliIo): void {
  program
    .command("forget")
    .description(
      "erase everything of one person across identity links and rewrite the store's files without it; prints a receipt",
    )
    .requiredOption("--subject <id>", "a person of session.identity_links or one of their accounts")
    .option("--yes", "required: this erases history for good")
    .option("--json", "print the receipt as JSON")
    .action(async (_options: unknown, command: Command) => {
      const options = command.optsWithGlobals<ForgetOptions>();
      const subject = options.subject ?? "";
      if (!options.yes) throw new UsageError(`forget erases everything of ${subject} for good: pass --yes`);
      const receipt = await withEngine(options, io, { readOnly: false }, (engine) =>
        engine.forget({ subject }),
      );
      if (options.json) {
        io.stdout(`${JSON.stringify(receipt, null, 2)}\n`);
        return;
      }
      for (const k of receipt.keys)
        io.stdout(`erased ${k.key}: ${plural(k.sessions, "session")}, ${plural(k.entries, "entry")}\n`);
      io.stdout(
        `forgot ${receipt.subject}: ${plural(receipt.sessions, "session")}, ${plural(receipt.entries, "entry")}, ` +
          `${plural(receipt.groups.messages, "group message")} in ${plural(receipt.groups.sessions, "other session")}, ` +
          `${plural(receipt.inboxRows, "inbox row")}, ${plural(receipt.runtimeAndShareKeys, "key")} ` +
          `with runtime sessions and share links cleared, ${plural(receipt.searchTerms, "search word")} dropped; ` +
          `files: ${receipt.scrub}\n`,
      );
      for (const gap of receipt.notErased) io.stdout(`not erased: ${gap}\n`);
    });
}
