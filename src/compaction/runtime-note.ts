import type { EntryInput } from "../model/entry.js";

/** A runtime that compacts its own history (Claude Code) reports it; sessiond keeps the transcript whole. */
export interface RuntimeCompaction {
  beforeTokens: number;
  afterTokens: number;
}

/** The note LoCrew records when a runtime compacted its own history. */
export function runtimeCompactionNote(agent: string, compaction: RuntimeCompaction): EntryInput {
  const fmt = (n: number) => Math.round(n).toLocaleString("en-US");
  return {
    type: "note",
    level: "info",
    code: "RUNTIME_COMPACTED",
    text: `${agent} compacted its own history: ${fmt(compaction.beforeTokens)} to ${fmt(compaction.afterTokens)} tokens. Nothing was removed from this transcript.`,
  };
}
