import { resolve } from "node:path";
import { type Command, Option } from "commander";
import { IMPORT_SOURCES, type ImportProblem, type ImportSource } from "../../import/types.js";
import { type GlobalOptions, withEngine } from "../context.js";
import { plural } from "../format/plural.js";
import { progressReporter } from "../format/progress.js";
import type { CliIo } from "../io.js";

interface ImportOptions extends GlobalOptions {
  from: ImportSource;
  dryRun?: boolean;
  agent?: string;
  agentMap?: string;
  accountMap?: string;
  json?: boolean;
}

export function registerImport(program: Command, io: CliIo): void {
  program
    .command("import")
    .description(
      "bring in the sessions another gateway keeps on disk (idempotent: a second run adds nothing)",
    )
    .addOption(
      new Option("--from <system>", "the system that wrote them")
        .choices(IMPORT_SOURCES)
        .makeOptionMandatory(),
    )
    .argument("<path>", "its home, workspace or sessions folder, or one of its files")
    .option("--dry-run", "only report what would come in")
    .option(
      "--agent <id>",
      "the agent for systems whose files name none (zeroclaw, nanobot, picoclaw), and the one the peer's default agent (OpenClaw's main, CrabTalk's crab, ZeroClaw's default) becomes (default: sessiond's default agent)",
    )
    .option("--agent-map <pairs>", "give a peer agent's sessions to a sessiond agent: work=main,ops=main")
    .option(
      "--account-map <pairs>",
      "give a peer's bot account the id sessiond's channel names it by: telegram:default=123456789",
    )
    .option("--json", "print the report as JSON")
    .action(async (path: string, _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<ImportOptions>();
      const dryRun = options.dryRun === true;
      const [
        { importSessions },
        { readSource },
        { parseAgentMap },
        { parseAccountMap },
        { ErasureTombstones },
      ] = await Promise.all([
        import("../../import/importer.js"),
        import("../../import/read-source.js"),
        import("../../import/agent-map.js"),
        import("../../import/account-map.js"),
        import("../../lifecycle/erasure-tombstones.js"),
      ]);
      const agentMap = options.agentMap !== undefined ? parseAgentMap(options.agentMap) : undefined;
      const accountMap = options.accountMap !== undefined ? parseAccountMap(options.accountMap) : undefined;
      const progress = progressReporter(
        io.stderr,
        io.stderrIsTTY === true,
        dryRun ? "checking" : "importing",
      );
      const report = await withEngine(options, io, { readOnly: dryRun }, (engine) => {
        const tombstones = new ErasureTombstones(engine.dataDir);
        const read = readSource(options.from, resolve(io.cwd, path), {
          agent: options.agent ?? engine.routing.defaultAgent,
          ...(agentMap ? { agentMap } : {}),
          ...(accountMap ? { accountMap } : {}),
        });
        return importSessions(engine.store, options.from, read, {
          dryRun,
          onProgress: progress,
          routing: engine.routing,
          erased: (key) => tombstones.erasedKey(key, engine.routing.agents),
        });
      });
      if (options.json) {
        io.stdout(`${JSON.stringify(report, null, 2)}\n`);
        return;
      }
      for (const problem of report.problems) io.stderr(`warning: ${where(problem)}: ${problem.reason}\n`);
      for (const { agent, sessions } of report.unconfiguredAgents)
        io.stderr(
          `agent ${agent}: ${plural(sessions, "session")}; add it to agents or map it (--agent-map ${agent}=<agent>)\n`,
        );
      for (const item of report.leftOut) io.stderr(`left out: ${where(item)}: ${item.reason}\n`);
      for (const a of report.assumptions) io.stderr(`note: ${a.key} (${a.file}): ${a.assumed}\n`);
      const verb = dryRun ? "would import" : "imported";
      const s = report.summary;
      io.stdout(
        `read ${plural(report.read, "session")} from ${options.from}; ${verb} ${plural(report.imported.sessions, "session")} ` +
          `(${plural(report.imported.entries, "entry")}); ${report.alreadyThere} already there; ` +
          `${plural(report.problems.length, "problem")}; ${plural(report.assumptions.length, "assumption")} about chats; ${report.leftOut.length} left out on purpose\n` +
          `${options.from}: ${plural(s.sessions, "session")}, ${plural(s.entries, "entry")}, ` +
          `${plural(s.messages, "message")}, ${plural(s.toolCalls, "tool call")}, ` +
          `${plural(s.toolResults, "tool result")}, ${plural(s.summaries, "summary")}, ` +
          `${plural(s.titles, "title")}, ${plural(s.problems, "problem")}\n`,
      );
    });
}

function where(problem: ImportProblem): string {
  if (problem.line !== undefined) return `${problem.file}:${problem.line}`;
  if (problem.row !== undefined) return `${problem.file} (${problem.row})`;
  return problem.file;
}
