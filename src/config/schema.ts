import { z } from "zod";
import { DM_SCOPES, GROUP_SCOPES, NAMED_SCOPES } from "../keys/index.js";

/** `sessiond.yaml`, strict at every level so unknown keys can be named (then dropped with a warning). Keys follow GoClaw's (`session.identity_links`, …) so its users can bring their config. */
export const configFileSchema = z.strictObject({
  data_dir: z.string().min(1).optional(),
  store: z
    .strictObject({
      backend: z.enum(["sqlite", "memory"]).optional(),
      /** The SQLite file; relative paths are under data_dir. */
      path: z.string().min(1).optional(),
      durability: z.enum(["strict", "relaxed"]).optional(),
      commit_interval_ms: z.number().int().min(0).max(1000).optional(),
    })
    .optional(),
  default_agent: z.string().min(1).optional(),
  agents: z.array(z.strictObject({ id: z.string().min(1) })).optional(),
  session: z
    .strictObject({
      scope: z.enum(NAMED_SCOPES).optional(),
      dm_scope: z.enum(DM_SCOPES).optional(),
      group_scope: z.enum(GROUP_SCOPES).optional(),
      group_scope_by_channel: z.record(z.string(), z.enum(GROUP_SCOPES)).optional(),
      identity_links: z.record(z.string(), z.array(z.string().min(1))).optional(),
      max_queued_turns: z.number().int().min(0).max(10_000).optional(),
    })
    .optional(),
});

export type ConfigFile = z.infer<typeof configFileSchema>;

/** Keys that once existed and are read by nothing now: named in a warning, never silently ignored. */
export const RETIRED_KEYS: Record<string, string> = {
  "session.maintenance":
    "session.maintenance was never read and has been removed; sessions are not pruned by age",
};
