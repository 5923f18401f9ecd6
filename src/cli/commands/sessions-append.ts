import { type Command, Option } from "commander";
import type { Role } from "../../model/entry.js";
import { type GlobalOptions, withEngine } from "../context.js";
import type { CliIo } from "../io.js";

interface AppendOptions extends GlobalOptions {
  role: Extract<Role, "user" | "assistant" | "system">;
  sender?: string;
  json?: boolean;
}

export function registerAppend(sessions: Command, io: CliIo): void {
  sessions
    .command("append")
    .description("append one message to a key's current session (created if needed); prints what it stored")
    .argument("<key>", "session key")
    .argument("<text...>", "the message (words are joined with spaces)")
    .addOption(
      new Option("--role <role>", "message role").choices(["user", "assistant", "system"]).default("user"),
    )
    .option("--sender <id>", "the sender's id")
    .option("--json", "print the stored entry as JSON")
    .action(async (key: string, words: string[], _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<AppendOptions>();
      const result = await withEngine(options, io, { readOnly: false }, (engine) =>
        engine.append(key, [
          {
            type: "message",
            role: options.role,
            content: words.join(" "),
            ...(options.sender !== undefined ? { sender: { id: options.sender } } : {}),
          },
        ]),
      );
      const entry = result.entries[0];
      if (!entry) throw new Error("append returned no entry");
      io.stdout(
        options.json
          ? `${JSON.stringify(entry, null, 2)}\n`
          : `stored in ${key} (generation ${result.session.generation}): seq ${entry.seq}, id ${entry.id}\n`,
      );
    });
}
