import type { Command } from "commander";
import { MAX_WORK_SESSION_MINUTES } from "../../model/work-session.js";
import type { AgentRuntimeSettings } from "../../runtimes/agents.js";
import type { AgentChange, AgentView } from "../../runtimes/sessions/agent-runtimes.js";
import { type GlobalOptions, withEngine } from "../context.js";
import { UsageError } from "../errors.js";
import { formatCost, workSessionLine } from "../format/runtime-sessions.js";
import { renderTable } from "../format/table.js";
import type { CliIo } from "../io.js";
import { intIn } from "../options.js";

interface JsonOption extends GlobalOptions {
  json?: boolean;
}

const SETTINGS: ReadonlyArray<keyof AgentRuntimeSettings> = [
  "runtime",
  "cwd",
  "model",
  "instructions",
  "executable",
  "url",
  "permission",
  "selfCompact",
  "selfCompactWindow",
];

function settingName(name: string): keyof AgentRuntimeSettings {
  if (!SETTINGS.includes(name as keyof AgentRuntimeSettings)) {
    throw new UsageError(`unknown agent setting ${JSON.stringify(name)} (settings: ${SETTINGS.join(", ")})`);
  }
  return name as keyof AgentRuntimeSettings;
}

function printChange(io: CliIo, change: AgentChange, json: boolean | undefined): void {
  if (json) {
    io.stdout(`${JSON.stringify(change, null, 2)}\n`);
    return;
  }
  io.stdout(`agent ${change.agent.name} updated\n`);
  if (change.notice) io.stdout(`${change.notice}\n`);
}

function describe(agent: AgentView): string {
  const lines = [`agent ${agent.name}`, `  runtime: ${agent.runtime}`];
  for (const name of SETTINGS.slice(1)) {
    const value = agent[name];
    if (value !== undefined) lines.push(`  ${name}: ${value}`);
  }
  lines.push(`  cost: ${formatCost(agent.cost)}`);
  for (const work of agent.workSessions) lines.push(`  ${workSessionLine(work, ` in ${work.key}`)}`);
  return `${lines.join("\n")}\n`;
}

/**
 * `sessiond agents`: list, show, set/unset settings (a new `cwd` clears the agent's runtime sessions),
 * duplicate (settings, no sessions), delete. Edits go to `<data dir>/agents.json`, over sessiond.yaml.
 */
export function registerAgents(program: Command, io: CliIo): void {
  const agents = program
    .command("agents")
    .description("list and edit agents: runtime, working directory, model, instructions; duplicate, delete");

  agents
    .command("list")
    .description("every agent with its runtime, working directory and cost")
    .option("--json", "print { agents: [...] }")
    .action(async (_options: unknown, command: Command) => {
      const options = command.optsWithGlobals<JsonOption>();
      const list = await withEngine(options, io, { readOnly: false }, (engine) => engine.agents.list());
      if (options.json) {
        io.stdout(`${JSON.stringify({ agents: list }, null, 2)}\n`);
        return;
      }
      io.stdout(
        renderTable(
          [
            { header: "AGENT" },
            { header: "RUNTIME" },
            { header: "MODEL" },
            { header: "CWD", max: 60 },
            { header: "COST" },
          ],
          list.map((a) => [a.name, a.runtime, a.model ?? "", a.cwd ?? "", formatCost(a.cost)]),
        ),
      );
    });

  agents
    .command("show")
    .description("one agent's settings and cost")
    .argument("<agent>", "agent name")
    .option("--json", "print the agent as JSON")
    .action(async (name: string, _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<JsonOption>();
      const agent = await withEngine(options, io, { readOnly: false }, (engine) => engine.agents.get(name));
      io.stdout(options.json ? `${JSON.stringify(agent, null, 2)}\n` : describe(agent));
    });

  agents
    .command("set")
    .description("change settings: name=value … (a new cwd clears the agent's saved runtime sessions)")
    .argument("<agent>", "agent name")
    .argument("<assignments...>", `e.g. cwd=/srv/app model=opus (settings: ${SETTINGS.join(", ")})`)
    .option("--json", "print the change as JSON")
    .action(async (name: string, assignments: string[], _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<JsonOption>();
      const patch: Partial<Record<keyof AgentRuntimeSettings, string>> = {};
      for (const text of assignments) {
        const at = text.indexOf("=");
        if (at <= 0) throw new UsageError(`expected name=value, got ${JSON.stringify(text)}`);
        patch[settingName(text.slice(0, at))] = text.slice(at + 1);
      }
      const change = await withEngine(options, io, { readOnly: false }, (engine) =>
        engine.agents.update(name, patch),
      );
      printChange(io, change, options.json);
    });

  agents
    .command("unset")
    .description("remove settings made with `agents set`, so the config file's apply again")
    .argument("<agent>", "agent name")
    .argument("<names...>", `setting names (${SETTINGS.join(", ")})`)
    .option("--json", "print the change as JSON")
    .action(async (name: string, names: string[], _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<JsonOption>();
      const patch = Object.fromEntries(names.map((n) => [settingName(n), null]));
      const change = await withEngine(options, io, { readOnly: false }, (engine) =>
        engine.agents.update(name, patch),
      );
      printChange(io, change, options.json);
    });

  agents
    .command("work-session")
    .description(
      "let an ask-first agent write without asking in one conversation for a while (clears nothing)",
    )
    .argument("<agent>", "agent name")
    .argument("<key>", "the conversation's session key")
    .option("--minutes <n>", "how long (default 30)", intIn(1, MAX_WORK_SESSION_MINUTES))
    .option("--end", "end it now")
    .option("--json", "print the work session as JSON")
    .action(async (name: string, key: string, _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<JsonOption & { minutes?: number; end?: boolean }>();
      const result = await withEngine(options, io, { readOnly: false }, async (engine) => {
        const { sessionNotFound } = await import("../../store/session-log.js");
        if (!(await engine.sessions.get(key))) throw sessionNotFound(key);
        if (options.end) return { ended: await engine.agents.workSessions.end(name, key) };
        return { workSession: await engine.agents.startWorkSession(name, key, options.minutes ?? 30) };
      });
      if (options.json) io.stdout(`${JSON.stringify(result, null, 2)}\n`);
      else if (result.workSession) io.stdout(`${workSessionLine(result.workSession, ` in ${key}`)}\n`);
      else io.stdout(result.ended ? `work session of ${name} in ${key} ended\n` : "no work session to end\n");
    });

  agents
    .command("duplicate")
    .description("a new agent with the same settings and no runtime sessions (a way to start fresh)")
    .argument("<agent>", "the agent to copy")
    .argument("<new>", "the new agent's name")
    .action(async (from: string, to: string, _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<GlobalOptions>();
      await withEngine(options, io, { readOnly: false }, (engine) => engine.agents.duplicate(from, to));
      io.stdout(`agent ${to} created from ${from}: same settings, no sessions\n`);
    });

  agents
    .command("delete")
    .description("delete an agent and all of its runtime sessions")
    .argument("<agent>", "agent name")
    .option("--yes", "required: deleting cannot be undone")
    .action(async (name: string, _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<GlobalOptions & { yes?: boolean }>();
      if (!options.yes) throw new UsageError("refusing to delete an agent without --yes");
      await withEngine(options, io, { readOnly: false }, (engine) => engine.agents.delete(name));
      io.stdout(`agent ${name} deleted with its runtime sessions\n`);
    });
}
