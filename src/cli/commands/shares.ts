import type { Command } from "commander";
import { type GlobalOptions, withEngine } from "../context.js";
import { CliError } from "../errors.js";
import type { CliIo } from "../io.js";

/** `shares revoke ID`: the link stops opening, on every gateway of the store, at once. */
export function registerShares(program: Command, io: CliIo): void {
  const shares = program.command("shares").description("revoke share links (sessions share makes them)");
  shares
    .command("revoke")
    .description("revoke a share link: it stops opening on every gateway of the store at once")
    .argument("<id>", "the link's id (the last part of its URL)")
    .action(async (id: string, _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<GlobalOptions>();
      // The id as pasted, or the whole URL.
      const bare = id.replace(/^.*\/share\//, "").replace(/\.json$/, "");
      const revoked = await withEngine(options, io, { readOnly: true }, (engine) =>
        engine.shares.revoke(bare),
      );
      if (!revoked) throw new CliError("no such share link");
      io.stdout(`revoked ${bare}\n`);
    });
}
