import type { Command } from "commander";
import type { CliIo } from "../io.js";
import { registerAppend } from "./sessions-append.js";
import { registerCompact } from "./sessions-compact.js";
import { registerDelete } from "./sessions-delete.js";
import { registerExport } from "./sessions-export.js";
import { registerIdentity } from "./sessions-identity.js";
import { registerList } from "./sessions-list.js";
import { registerOverrides } from "./sessions-overrides.js";
import { registerPrune } from "./sessions-prune.js";
import { registerReset } from "./sessions-reset.js";
import { registerShow } from "./sessions-show.js";

export function registerSessions(program: Command, io: CliIo): void {
  const sessions = program
    .command("sessions")
    .description("list, inspect, export, compact, reset and delete stored sessions");
  registerList(sessions, io);
  registerShow(sessions, io);
  registerAppend(sessions, io);
  registerExport(sessions, io);
  registerCompact(sessions, io);
  registerOverrides(sessions, io);
  registerIdentity(sessions, io);
  registerReset(sessions, io);
  registerPrune(sessions, io);
  registerDelete(sessions, io);
}
