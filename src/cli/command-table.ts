import type { Command } from "commander";
import type { CliIo } from "./io.js";

/** Adds its commands to `parent`; `rest` is the command line after the command's name, when known. */
export type Register = (parent: Command, io: CliIo, rest?: readonly string[]) => void | Promise<void>;

/** Command modules in the order help lists them, by the names they register, each imported only when needed. */
export type CommandTable = ReadonlyArray<readonly [names: readonly string[], load: () => Promise<Register>]>;

/**
 * Registers on `parent` only the command `argv` names, so a command imports its own modules and no
 * other's; all of them when it names none that the table has (no command, `help`, `-h`, a typo commander
 * suggests a fix for, an option it reports). `valueOptions` are the options of `parent` that take a value,
 * so that value is not read as the command's name.
 */
export async function registerCommands(
  parent: Command,
  io: CliIo,
  table: CommandTable,
  argv: readonly string[] | undefined,
  valueOptions: readonly string[] = [],
): Promise<void> {
  const named = argv === undefined ? undefined : commandNamed(argv, valueOptions);
  const chosen = named && table.find(([names]) => names.includes(named.name));
  const entries = chosen ? [chosen] : table;
  const registers = await Promise.all(entries.map(([, load]) => load()));
  for (const register of registers) await register(parent, io, chosen ? named.rest : undefined);
}

function commandNamed(
  argv: readonly string[],
  valueOptions: readonly string[],
): { name: string; rest: readonly string[] } | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (valueOptions.includes(arg)) {
      i++;
      continue;
    }
    if (valueOptions.some((option) => arg.startsWith(`${option}=`))) continue;
    // `-h`, `-V`, `--` or an option commander will report: it decides, knowing every command.
    if (arg.startsWith("-")) return undefined;
    return { name: arg, rest: argv.slice(i + 1) };
  }
  return undefined;
}
