import type { Command } from "commander";
import type { OverrideChange } from "../../engine.js";
import { validateKey } from "../../keys/index.js";
import { parseAssignment } from "../../lifecycle/overrides.js";
import type { OverrideValue } from "../../model/session.js";
import { type GlobalOptions, withEngine } from "../context.js";
import type { CliIo } from "../io.js";

interface JsonOption extends GlobalOptions {
  json?: boolean;
}

function report(io: CliIo, key: string, changes: OverrideChange[], json: boolean | undefined): void {
  if (json) {
    io.stdout(`${JSON.stringify(changes, null, 2)}\n`);
    return;
  }
  for (const c of changes) {
    const value = c.effective.value === undefined ? "(not set)" : JSON.stringify(c.effective.value);
    const what = c.effect === "set" ? "set" : c.effect === "removed" ? "override removed" : "unchanged";
    io.stdout(`${key}: ${c.name} ${what}; now ${value} (from ${c.effective.source})\n`);
  }
}

export function registerOverrides(sessions: Command, io: CliIo): void {
  sessions
    .command("set")
    .description(
      "override settings for one session: name=value … (a value equal to the inherited one removes the override)",
    )
    .argument("<key>", "session key")
    .argument("<assignments...>", "e.g. model=gpt-4o compaction.max_messages=80 reset.mode=idle")
    .option("--json", "print the changes as JSON")
    .action(async (key: string, assignments: string[], _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<JsonOption>();
      validateKey(key);
      const values: Record<string, OverrideValue> = {};
      for (const text of assignments) {
        const { name, value } = parseAssignment(text);
        values[name] = value;
      }
      const changes = await withEngine(options, io, { readOnly: false }, (engine) =>
        engine.overrides.set(key, values),
      );
      report(io, key, changes, options.json);
    });

  sessions
    .command("unset")
    .description("remove overrides from one session, so it inherits again")
    .argument("<key>", "session key")
    .argument("<names...>", "override names, e.g. model")
    .option("--json", "print the changes as JSON")
    .action(async (key: string, names: string[], _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<JsonOption>();
      validateKey(key);
      const changes = await withEngine(options, io, { readOnly: false }, (engine) =>
        engine.overrides.unset(key, names),
      );
      report(io, key, changes, options.json);
    });
}
