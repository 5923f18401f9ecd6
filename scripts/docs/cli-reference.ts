import type { Command } from "commander";
import type { CliIo } from "../../src/cli/io.js";
import { buildProgram } from "../../src/cli/program.js";

/** A program that prints nowhere: only its definition is read. */
function quietIo(): CliIo {
  return {
    stdout: () => {},
    stderr: () => {},
    stdin: process.stdin,
    stdinIsTTY: false,
    env: {},
    cwd: process.cwd(),
    now: () => 0,
  };
}

function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c; c = c.parent) names.unshift(c.name());
  return names.join(" ");
}

/** Every command that does something (a leaf), depth first, in the order commander lists them. */
function leaves(command: Command): Command[] {
  const help = command.createHelp();
  const children = help.visibleCommands(command).filter((c) => c.name() !== "help");
  return children.length === 0 ? [command] : children.flatMap(leaves);
}

/**
 * The CLI reference, from commander's own definitions (what `--help` prints): each command's usage and
 * description, then its options. The global options and exit codes come first.
 */
export async function cliReference(): Promise<string> {
  const program = await buildProgram(quietIo());
  const help = program.createHelp();
  const lines: string[] = [];
  const options = (command: Command) => {
    const visible = help.visibleOptions(command).filter((o) => o.long !== "--help");
    const width = Math.max(0, ...visible.map((o) => help.optionTerm(o).length));
    for (const o of visible) {
      lines.push(`    ${help.optionTerm(o).padEnd(width)}  ${help.optionDescription(o)}`.trimEnd());
    }
  };
  lines.push(`${program.name()} ${help.commandUsage(program).replace(/^\S+ /, "")}`);
  options(program);
  for (const command of leaves(program)) {
    const usage = help.commandUsage(command).replace(/^.*? (?=\[options\]|<|\[)/, "");
    lines.push("", `${commandPath(command)} ${usage}`.trimEnd(), `  ${help.commandDescription(command)}`);
    options(command);
  }
  return `\`\`\`\n${lines.join("\n")}\n\`\`\`\n`;
}
