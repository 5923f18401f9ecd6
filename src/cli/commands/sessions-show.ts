import type { Command } from "commander";
import { exportJson } from "../../export/index.js";
import { type GlobalOptions, withEngine } from "../context.js";
import { formatEntry } from "../format/entry.js";
import { plural } from "../format/plural.js";
import { formatRuntimeSessions } from "../format/runtime-sessions.js";
import { formatFacts, formatGenerationLine } from "../format/session.js";
import { type KeyHistory, readHistory } from "../history.js";
import type { CliIo } from "../io.js";
import { intIn } from "../options.js";

interface ShowOptions extends GlobalOptions {
  json?: boolean;
  all?: boolean;
  limit?: number;
}

export function registerShow(sessions: Command, io: CliIo): void {
  sessions
    .command("show")
    .description("show a session's facts and transcript")
    .argument("<key>", "session key")
    .option("--json", 'print { "session": ..., "generations"?: [...], "entries": [...] }')
    .option("--all", "include the archived generations before the current one")
    .option("--limit <n>", "only the newest <n> entries", intIn(1, Number.MAX_SAFE_INTEGER))
    .action(async (key: string, _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<ShowOptions>();
      const { history, runtimes, agents } = await withEngine(
        options,
        io,
        { readOnly: true },
        async (engine) => ({
          history: await readHistory(engine, key, options),
          runtimes: await engine.agents.conversation(key),
          agents: engine.routing.agents,
        }),
      );
      if (options.json) {
        io.stdout(exportJson(history.sessions, history.entries, { generations: options.all === true }));
        return;
      }
      io.stdout(transcript(history, io.now()));
      if (!agents.includes(history.current.agent))
        io.stdout(
          `\nagent ${history.current.agent} is not configured: this session runs no turn; add it to agents, or import again with --agent-map ${history.current.agent}=<agent>\n`,
        );
      io.stdout(formatRuntimeSessions([history.current.agent], runtimes));
    });
}

function transcript({ current, sessions, entries }: KeyHistory, now: number): string {
  const out: string[] = [formatFacts(current, now)];
  if (sessions.length > 1) {
    out.push(`\ngenerations (${sessions.length}):\n`);
    for (const s of sessions) out.push(`  ${formatGenerationLine(s, now)}\n`);
  }
  const total = sessions.reduce((n, s) => n + s.entryCount, 0);
  out.push(
    entries.length < total
      ? `\ntranscript (the last ${entries.length} of ${plural(total, "entry")}):\n`
      : `\ntranscript (${plural(total, "entry")}):\n`,
  );
  let sessionId: string | undefined;
  for (const entry of entries) {
    if (sessions.length > 1 && entry.sessionId !== sessionId) {
      const session = sessions.find((s) => s.id === entry.sessionId);
      out.push(`--- generation ${session?.generation ?? "?"} (${entry.sessionId}) ---\n`);
    }
    sessionId = entry.sessionId;
    out.push(formatEntry(entry));
  }
  return out.join("");
}
