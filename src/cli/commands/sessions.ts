import type { Command } from "commander";
import { type CommandTable, registerCommands } from "../command-table.js";
import type { CliIo } from "../io.js";

const SUBCOMMANDS: CommandTable = [
  [["list"], async () => (await import("./sessions-list.js")).registerList],
  [["show"], async () => (await import("./sessions-show.js")).registerShow],
  [["append"], async () => (await import("./sessions-append.js")).registerAppend],
  [["export"], async () => (await import("./sessions-export.js")).registerExport],
  [["compact"], async () => (await import("./sessions-compact.js")).registerCompact],
  [["set", "unset"], async () => (await import("./sessions-overrides.js")).registerOverrides],
  [["relink", "forget"], async () => (await import("./sessions-identity.js")).registerIdentity],
  [["reset"], async () => (await import("./sessions-reset.js")).registerReset],
  [["fork", "rewind", "branches"], async () => (await import("./sessions-branches.js")).registerBranches],
  [["prune"], async () => (await import("./sessions-prune.js")).registerPrune],
  [["delete"], async () => (await import("./sessions-delete.js")).registerDelete],
  [["share", "shares"], async () => (await import("./sessions-share.js")).registerShare],
];

export async function registerSessions(program: Command, io: CliIo, rest?: readonly string[]): Promise<void> {
  const sessions = program
    .command("sessions")
    .description("list, inspect, export, compact, reset, fork, rewind and delete stored sessions");
  await registerCommands(sessions, io, SUBCOMMANDS, rest);
}
