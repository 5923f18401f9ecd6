import type { Command } from "commander";
import { type GlobalOptions, withEngine } from "../context.js";
import { plural } from "../format/plural.js";
import { formatDateTime } from "../format/time.js";
import type { CliIo } from "../io.js";

interface PruneOptions extends GlobalOptions {
  dryRun?: boolean;
  json?: boolean;
}

export function registerPrune(sessions: Command, io: CliIo): void {
  sessions
    .command("prune")
    .description(
      "apply retention: single-event webhook sessions idle 7 days, archived generations past their period",
    )
    .option("--dry-run", "only show what would be removed")
    .option("--json", "print the plan (and what was removed) as JSON")
    .action(async (_options: unknown, command: Command) => {
      const options = command.optsWithGlobals<PruneOptions>();
      const result = await withEngine(options, io, { readOnly: Boolean(options.dryRun) }, (engine) =>
        engine.prune({ dryRun: Boolean(options.dryRun) }),
      );
      if (options.json) {
        io.stdout(`${JSON.stringify(result, null, 2)}\n`);
        return;
      }
      for (const item of result.plan.sessions) {
        const what = item.scope === "key" ? "key" : `generation ${item.sessionId}`;
        io.stdout(
          `${item.reason}  ${item.key} (${what}), last active ${formatDateTime(item.lastActivityAt)}\n`,
        );
      }
      const n = result.plan.sessions.length;
      if (result.applied) {
        io.stdout(
          `removed ${plural(result.applied.sessions, "session")} (${plural(result.applied.entries, "entry")})\n`,
        );
      } else {
        io.stdout(`${n} would be removed${n > 0 ? "; run without --dry-run to remove them" : ""}\n`);
      }
    });
}
