import { randomBytes } from "node:crypto";
import { renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, extname, join, resolve } from "node:path";
import { type Command, Option } from "commander";
import { EXPORT_FORMATS, type ExportFormat, exportSessions } from "../../export/index.js";
import { type GlobalOptions, withEngine } from "../context.js";
import { CliError, UsageError } from "../errors.js";
import { readHistory } from "../history.js";
import type { CliIo } from "../io.js";

interface ExportOptions extends GlobalOptions {
  format?: ExportFormat;
  all?: boolean;
  output?: string;
}

const BY_EXTENSION: Record<string, ExportFormat> = {
  ".json": "json",
  ".jsonl": "jsonl",
  ".md": "md",
  ".markdown": "md",
};

export function registerExport(sessions: Command, io: CliIo): void {
  sessions
    .command("export")
    .description("write a session as JSON, CrabTalk JSONL or Markdown")
    .argument("<key>", "session key")
    .addOption(
      new Option(
        "--format <format>",
        "json | jsonl (CrabTalk) | md (default: from --output's extension)",
      ).choices(EXPORT_FORMATS),
    )
    .option("--all", "include the archived generations before the current one")
    .option("--output <file>", "write to this file instead of stdout")
    .action(async (key: string, _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<ExportOptions>();
      const output = options.output === "-" ? undefined : options.output;
      const format = options.format ?? (output ? BY_EXTENSION[extname(output).toLowerCase()] : undefined);
      if (!format) throw new UsageError("pass --format json|jsonl|md");
      const history = await withEngine(options, io, { readOnly: true }, (engine) =>
        readHistory(engine, key, options),
      );
      const text = exportSessions(format, history.sessions, history.entries, {
        generations: options.all === true,
      });
      if (!output) {
        io.stdout(text);
        return;
      }
      const path = resolve(io.cwd, output);
      writeAtomically(path, text);
      io.stdout(`exported ${history.entries.length} entries of ${JSON.stringify(key)} to ${path}\n`);
    });
}

/** A crash or a full disk leaves the previous file, never half an export. */
function writeAtomically(path: string, text: string): void {
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(4).toString("hex")}.tmp`);
  try {
    writeFileSync(temp, text, { flag: "wx" });
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw new CliError(`cannot write ${path}: ${(error as Error).message}`);
  }
}
