import type { Command } from "commander";
import { type GlobalOptions, withEngine } from "../context.js";
import { UsageError } from "../errors.js";
import { plural } from "../format/plural.js";
import type { CliIo } from "../io.js";

interface RelinkOptions extends GlobalOptions {
  apply?: boolean;
  json?: boolean;
}

export function registerIdentity(sessions: Command, io: CliIo): void {
  sessions
    .command("relink")
    .description(
      "after session.identity_links changed: list the sessions they orphan; --apply carries them over",
    )
    .option("--apply", "move each orphaned key's history to its new key (both stay readable)")
    .option("--json", "print the result as JSON")
    .action(async (_options: unknown, command: Command) => {
      const options = command.optsWithGlobals<RelinkOptions>();
      const check = await withEngine(options, io, { readOnly: !options.apply, quiet: true }, (engine) =>
        options.apply ? engine.identity.relink() : engine.identity.check(),
      );
      if (options.json) {
        io.stdout(`${JSON.stringify(check, null, 2)}\n`);
        return;
      }
      if (check.applied) {
        for (const m of check.applied.merges)
          io.stdout(`moved ${m.from} → ${m.to} (${plural(m.moved, "session")})\n`);
        io.stdout(`${check.applied.merges.length} keys carried over\n`);
        return;
      }
      if (check.merges.length === 0) {
        io.stdout("nothing to relink: no session is orphaned by the identity links\n");
        return;
      }
      for (const m of check.merges) io.stdout(`${m.from} → ${m.to}\n`);
      io.stdout(`${check.merges.length} keys would move; run with --apply to carry them over\n`);
    });

  sessions
    .command("forget")
    .description("delete every session of one person across their linked accounts (all generations)")
    .argument("<identity>", "a person named in session.identity_links, or one of their accounts")
    .option("--yes", "required: this deletes history for good")
    .option("--json", "print what was deleted as JSON")
    .action(async (identity: string, _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<GlobalOptions & { yes?: boolean; json?: boolean }>();
      if (!options.yes) {
        throw new UsageError(`forget deletes every session of ${identity} for good: pass --yes`);
      }
      const result = await withEngine(options, io, { readOnly: false }, (engine) =>
        engine.identity.forget(identity),
      );
      if (options.json) {
        io.stdout(`${JSON.stringify(result, null, 2)}\n`);
        return;
      }
      for (const k of result.keys)
        io.stdout(`deleted ${k.key}: ${plural(k.sessions, "session")}, ${plural(k.entries, "entry")}\n`);
      io.stdout(
        `forgot ${result.person}: ${plural(result.sessions, "session")}, ${plural(result.entries, "entry")}\n`,
      );
    });
}
