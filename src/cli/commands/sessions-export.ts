import { randomBytes } from "node:crypto";
import { renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, extname, join, resolve } from "node:path";
import { type Command, Option } from "commander";
import type { Engine } from "../../engine.js";
import { EXPORT_FORMATS, type ExportFormat, exportJsonlFiles, exportSessions } from "../../export/index.js";
import { makeDirSync } from "../../fs/make-dir.js";
import { incognitoRefusal } from "../../incognito/errors.js";
import { safeFileStem } from "../../keys/index.js";
import { type GlobalOptions, withEngine } from "../context.js";
import { CliError, UsageError } from "../errors.js";
import { plural } from "../format/plural.js";
import { readHistory } from "../history.js";
import type { CliIo } from "../io.js";
import { systemReason } from "../system-errors.js";

interface ExportOptions extends GlobalOptions {
  format?: ExportFormat;
  all?: boolean;
  allSessions?: boolean;
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
    .description("write a session (or every session) as JSON, CrabTalk JSONL or Markdown")
    .argument("[key]", "session key (leave out with --all-sessions)")
    .addOption(
      new Option(
        "--format <format>",
        "json | jsonl (CrabTalk) | md (default: from --output's extension)",
      ).choices(EXPORT_FORMATS),
    )
    .option("--all", "include the archived generations before the current one")
    .option(
      "--all-sessions",
      "export every key, all generations, one file per key into the --output directory (jsonl: one per generation)",
    )
    .option("--output <path>", "write to this file (a directory with --all-sessions) instead of stdout")
    .action(async (key: string | undefined, _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<ExportOptions>();
      if (options.allSessions) {
        if (key !== undefined) throw new UsageError("pass a key or --all-sessions, not both");
        await exportAll(options, io);
        return;
      }
      if (key === undefined) throw new UsageError("pass a key, or --all-sessions");
      const output = options.output === "-" ? undefined : options.output;
      const format = options.format ?? (output ? BY_EXTENSION[extname(output).toLowerCase()] : undefined);
      if (!format) throw new UsageError("pass --format json|jsonl|md");
      const history = await withEngine(options, io, { readOnly: true }, (engine) => {
        // A key a session.incognito_for rule matches: whatever it held was in a gateway's memory only.
        if (engine.isIncognito(key)) throw incognitoRefusal(key, "exported");
        return readHistory(engine, key, options);
      });
      const text = exportSessions(format, history.sessions, history.entries, {
        generations: options.all === true,
      });
      if (!output) {
        io.stdout(text);
        return;
      }
      const path = resolve(io.cwd, output);
      writeAtomically(path, text);
      io.stdout(`exported ${plural(history.entries.length, "entry")} of ${JSON.stringify(key)} to ${path}\n`);
    });
}

/** Every key with all its generations, one file per key named by its safe file stem. */
async function exportAll(options: ExportOptions, io: CliIo): Promise<void> {
  if (!options.output || options.output === "-") throw new UsageError("--all-sessions needs --output <dir>");
  const format = options.format;
  if (!format) throw new UsageError("pass --format json|jsonl|md");
  const dir = resolve(io.cwd, options.output);
  makeDirSync(dir);
  const extension = format === "md" ? ".md" : `.${format}`;
  const counts = await withEngine(options, io, { readOnly: true }, async (engine) => {
    let files = 0;
    let entries = 0;
    for (const key of await allKeys(engine)) {
      const history = await readHistory(engine, key, { all: true });
      if (format === "jsonl") {
        // A CrabTalk sessions directory: one file per generation.
        for (const file of exportJsonlFiles(history.sessions, history.entries))
          writeAtomically(join(dir, file.name), file.text);
        files++;
        entries += history.entries.length;
        continue;
      }
      writeAtomically(
        join(dir, `${safeFileStem(key)}${extension}`),
        exportSessions(format, history.sessions, history.entries, { generations: true }),
      );
      files++;
      entries += history.entries.length;
    }
    return { files, entries };
  });
  io.stdout(`exported ${plural(counts.files, "key")} (${plural(counts.entries, "entry")}) to ${dir}\n`);
}

async function allKeys(engine: Engine): Promise<string[]> {
  const keys = new Set<string>();
  let cursor: string | undefined;
  do {
    const page = await engine.sessions.list({
      includeArchived: true,
      limit: 1000,
      ...(cursor ? { cursor } : {}),
    });
    for (const session of page.sessions) keys.add(session.key);
    cursor = page.nextCursor;
  } while (cursor);
  return [...keys].sort();
}

/** A crash or a full disk leaves the previous file, never half an export. */
function writeAtomically(path: string, text: string): void {
  if (statSync(path, { throwIfNoEntry: false })?.isDirectory()) {
    throw new UsageError(
      `--output ${path} is a directory: give a file name (or --all-sessions for one file per key in it)`,
    );
  }
  const temp = join(dirname(path), `.${basename(path)}.${randomBytes(4).toString("hex")}.tmp`);
  try {
    writeFileSync(temp, text, { flag: "wx" });
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    const code = (error as NodeJS.ErrnoException).code;
    const reason =
      code === "ENOENT" ? `the directory ${dirname(path)} does not exist` : systemReason(code ?? "unknown");
    throw new CliError(`cannot write ${path}: ${reason}`);
  }
}
