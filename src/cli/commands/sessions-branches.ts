import type { Command } from "commander";
import type { BranchedRuntimes } from "../../engine/api.js";
import { branchesAnswer, forkAnswer, rewindAnswer } from "../../gateway/branch-answers.js";
import { validateKey } from "../../keys/index.js";
import { type GlobalOptions, withEngine } from "../context.js";
import { plural } from "../format/plural.js";
import { formatOrigin } from "../format/session.js";
import { oneLine, renderTable } from "../format/table.js";
import { formatRelative } from "../format/time.js";
import type { CliIo } from "../io.js";
import { intIn } from "../options.js";

interface ForkOptions extends GlobalOptions {
  at?: number;
  toKey?: string;
  json?: boolean;
}

interface RewindOptions extends GlobalOptions {
  to: number;
  expectHead?: number;
  json?: boolean;
}

interface BranchesOptions extends GlobalOptions {
  json?: boolean;
}

const seq = (min: number) => intIn(min, Number.MAX_SAFE_INTEGER);
const json = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** What the agents' runtime sessions did, when they did anything: `main follows; coder cleared (…)`. */
function runtimeLine({ runtimeSessions }: BranchedRuntimes): string {
  const parts = [
    ...(runtimeSessions.followed.length > 0 ? [`${runtimeSessions.followed.join(", ")} follow`] : []),
    ...(runtimeSessions.cleared.length > 0
      ? [`${runtimeSessions.cleared.join(", ")} cleared (a note in the conversation says why)`]
      : []),
  ];
  return parts.length > 0 ? `runtime sessions: ${parts.join("; ")}\n` : "";
}

/** `sessions fork`, `sessions rewind` and `sessions branches`; `--json` prints what the REST routes answer. */
export function registerBranches(sessions: Command, io: CliIo): void {
  sessions
    .command("fork")
    .description("start a new key whose history is this one's up to an entry (nothing is copied)")
    .argument("<key>", "session key")
    .option("--at <seq>", "fork after this entry (default: the newest completed one)", seq(1))
    .option(
      "--to-key <key>",
      "the new key, one with no session yet (default: admin-fork-<id>, or <key>/fork-<id> for an admin- key)",
    )
    .option("--json", 'print { "key", "session", "forked_from", "runtime_sessions" } (as REST answers)')
    .action(async (key: string, _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<ForkOptions>();
      validateKey(key);
      if (options.toKey !== undefined) validateKey(options.toKey);
      const result = await withEngine(options, io, { readOnly: false }, (engine) =>
        engine.fork(key, {
          ...(options.at !== undefined ? { atSeq: options.at } : {}),
          ...(options.toKey !== undefined ? { toKey: options.toKey } : {}),
        }),
      );
      if (options.json) {
        io.stdout(json(forkAnswer(result)));
        return;
      }
      io.stdout(
        `forked ${JSON.stringify(key)} at #${result.forkedFrom.seq} → ${JSON.stringify(result.session.key)} ` +
          `(session ${result.session.id}); ${JSON.stringify(key)} is unchanged\n${runtimeLine(result)}`,
      );
    });

  sessions
    .command("rewind")
    .description(
      "continue the key's conversation from before an entry; what came after stays readable as a branch",
    )
    .argument("<key>", "session key")
    .requiredOption("--to <seq>", "the first entry left out", seq(1))
    .option(
      "--expect-head <seq>",
      "refuse (SESSION_CHANGED) unless the newest entry is still this one",
      seq(0),
    )
    .option("--json", 'print { "session", "archived", "forked_from", "runtime_sessions" } (as REST answers)')
    .action(async (key: string, _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<RewindOptions>();
      validateKey(key);
      const result = await withEngine(options, io, { readOnly: false }, (engine) =>
        engine.rewind(key, {
          toSeq: options.to,
          ...(options.expectHead !== undefined ? { expectHead: options.expectHead } : {}),
        }),
      );
      if (options.json) {
        io.stdout(json(rewindAnswer(result)));
        return;
      }
      const { current, archived } = result;
      io.stdout(
        `rewound ${JSON.stringify(key)} to before #${options.to}: generation ${current.generation} (${current.id}) ` +
          `continues from #${result.forkedFrom.seq}; generation ${archived.generation} (${archived.id}, ` +
          `${plural(archived.entryCount, "entry")}) is archived (\`sessiond sessions branches\` lists it)\n` +
          runtimeLine(result),
      );
    });

  sessions
    .command("branches")
    .description("the key's conversation tree: its current, rewound and archived sessions, and their forks")
    .argument("<key>", "session key")
    .option("--json", 'print { "key", "branches": [{ "kind", "key", "session" }] }')
    .action(async (key: string, _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<BranchesOptions>();
      validateKey(key);
      const branches = await withEngine(options, io, { readOnly: true }, async (engine) => {
        const found = await engine.branches(key);
        // A key with no session has no branches: said as every other command says it.
        if (found.length > 0) return found;
        const { sessionNotFound } = await import("../../store/session-log.js");
        throw sessionNotFound(key);
      });
      if (options.json) {
        io.stdout(json(branchesAnswer(key, branches)));
        return;
      }
      const now = io.now();
      io.stdout(
        renderTable(
          [
            { header: "KIND" },
            { header: "KEY", max: 48 },
            { header: "SESSION" },
            { header: "GEN", align: "right" },
            { header: "ENTRIES", align: "right" },
            { header: "HISTORY FROM", max: 60 },
            { header: "LAST ACTIVITY" },
          ],
          branches.map(({ kind, key: branchKey, session }) => [
            kind,
            oneLine(branchKey),
            session.id,
            String(session.generation),
            String(session.entryCount),
            oneLine(formatOrigin(session)) || "-",
            formatRelative(session.lastActivityAt, now),
          ]),
        ),
      );
    });
}
