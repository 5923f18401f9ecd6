import { type Command, Option } from "commander";
import type { Session } from "../../model/session.js";
import type { SessionQuery, SessionSort } from "../../store/store.js";
import { type GlobalOptions, withEngine } from "../context.js";
import { renderTable } from "../format/table.js";
import { formatRelative, formatUntil } from "../format/time.js";
import type { CliIo } from "../io.js";
import { intIn, positiveNumber, shellWord } from "../options.js";

const DEFAULT_LIMIT = 50;
const DEFAULT_SORT: SessionSort = "activity";

interface ListOptions extends GlobalOptions {
  json?: boolean;
  limit: number;
  agent?: string;
  channel?: string;
  active?: number;
  sort: SessionSort;
  cursor?: string;
  all?: boolean;
}

export function registerList(sessions: Command, io: CliIo): void {
  sessions
    .command("list")
    .description("list sessions, most recently active first")
    .option("--json", 'print { "sessions": [...], "nextCursor"?: "..." }')
    .option("--limit <n>", "sessions per page (1-1000)", intIn(1, 1000), DEFAULT_LIMIT)
    .option("--agent <id>", "only this agent's sessions")
    .option("--channel <name>", "only sessions on this channel")
    .option("--active <minutes>", "only sessions active in the last <minutes>", positiveNumber)
    .addOption(new Option("--sort <order>", "order").choices(["created", "activity"]).default(DEFAULT_SORT))
    .option("--cursor <cursor>", "the next page: the cursor the previous page printed")
    .option("--all", "include archived generations")
    .action(async (_options: unknown, command: Command) => {
      const options = command.optsWithGlobals<ListOptions>();
      const now = io.now();
      const query: SessionQuery = {
        sort: options.sort,
        limit: options.limit,
        ...(options.agent !== undefined ? { agent: options.agent } : {}),
        ...(options.channel !== undefined ? { channel: options.channel } : {}),
        ...(options.active !== undefined ? { activeSince: now - Math.round(options.active * 60_000) } : {}),
        ...(options.cursor !== undefined ? { cursor: options.cursor } : {}),
        ...(options.all ? { includeArchived: true } : {}),
      };
      const { page, resetsAt, agents } = await withEngine(options, io, { readOnly: true }, async (engine) => {
        const page = await engine.sessions.list(query);
        return {
          page,
          resetsAt: page.sessions.map((s) => engine.sessions.resetDueAt(s)),
          agents: engine.routing.agents,
        };
      });
      // Sessions of an agent the config does not list (brought in by an import) run no turn: said, not hidden.
      const unconfigured = [...new Set(page.sessions.map((s) => s.agent).filter((a) => !agents.includes(a)))];
      if (options.json) {
        const out = unconfigured.length > 0 ? { ...page, unconfiguredAgents: unconfigured } : page;
        io.stdout(`${JSON.stringify(out, null, 2)}\n`);
        return;
      }
      if (page.sessions.length === 0) {
        io.stdout(options.cursor ? "No more sessions.\n" : "No sessions.\n");
        return;
      }
      io.stdout(sessionTable(page.sessions, resetsAt, now, agents));
      for (const agent of unconfigured)
        io.stdout(
          `\nagent ${agent} is not configured: its sessions run no turn; add it to agents, or import again with --agent-map ${agent}=<agent>\n`,
        );
      if (page.nextCursor !== undefined) {
        io.stdout(`\nMore sessions: ${nextPageCommand(options, page.nextCursor)}\n`);
      }
    });
}

/** The RESETS column is there only when some session on the page has a reset rule. */
function sessionTable(
  sessions: readonly Session[],
  resetsAt: ReadonlyArray<number | undefined>,
  now: number,
  agents: readonly string[],
): string {
  const withResets = resetsAt.some((at) => at !== undefined);
  return renderTable(
    [
      { header: "KEY", max: 48 },
      { header: "AGENT", max: 24 },
      { header: "CHANNEL", max: 16 },
      { header: "TITLE", max: 32 },
      { header: "MSGS", align: "right" },
      { header: "LAST ACTIVE" },
      ...(withResets ? [{ header: "RESETS" }] : []),
      { header: "STATE" },
    ],
    sessions.map((s, i) => {
      const resetAt = resetsAt[i];
      return [
        s.key,
        agents.includes(s.agent) ? s.agent : `${s.agent} (unconfigured)`,
        s.channel,
        s.title === "" ? "-" : s.title,
        String(s.messageCount),
        formatRelative(s.lastActivityAt, now),
        ...(withResets ? [resetAt === undefined ? "-" : formatUntil(resetAt, now)] : []),
        s.state,
      ];
    }),
  );
}

/** The same command with the same filters, plus the cursor: copy-pasteable. */
function nextPageCommand(options: ListOptions, cursor: string): string {
  const words = ["sessiond"];
  if (options.config !== undefined) words.push("--config", options.config);
  if (options.dataDir !== undefined) words.push("--data-dir", options.dataDir);
  words.push("sessions", "list");
  if (options.limit !== DEFAULT_LIMIT) words.push("--limit", String(options.limit));
  if (options.agent !== undefined) words.push("--agent", options.agent);
  if (options.channel !== undefined) words.push("--channel", options.channel);
  if (options.active !== undefined) words.push("--active", String(options.active));
  if (options.sort !== DEFAULT_SORT) words.push("--sort", options.sort);
  if (options.all) words.push("--all");
  words.push("--cursor", cursor);
  return words.map(shellWord).join(" ");
}
