import { defaultRoutingConfig } from "../keys/config.js";
import type { RoutingConfig } from "../keys/types.js";
import type { EntryInput } from "../model/entry.js";
import { isSessiondError } from "../model/errors.js";
import type { Session } from "../model/session.js";
import type { Store } from "../store/store.js";
import { unconfiguredAgents } from "./agent-map.js";
import { type ImportAssumption, planKeys, type Routed } from "./plan-keys.js";
import { sessionInputs } from "./session-inputs.js";
import type { ImportProblem, ImportSource, SourceRead } from "./types.js";

export interface ImportOptions {
  /** Report what would come in, write nothing. */
  dryRun?: boolean;
  /** Called after each source session. */
  onProgress?: (done: number, total: number) => void;
  /** The routing the store is served with (default: sessiond's defaults); imported chats get its keys. */
  routing?: RoutingConfig;
  /** Keys of subjects erased by `forget --subject` (erasure-tombstones.ts): left out and reported. */
  erased?: (key: string) => boolean;
}

/** What came in (or would, with dryRun), counted by kind. */
export interface ImportSummary {
  sessions: number;
  entries: number;
  messages: number;
  toolCalls: number;
  toolResults: number;
  summaries: number;
  titles: number;
  problems: number;
}

export interface ImportReport {
  source: ImportSource;
  dryRun: boolean;
  /** Sessions read from the source. */
  read: number;
  /** What the peer stored that does not come in, and why (never a silent drop). */
  leftOut: ImportProblem[];
  /** Sessions and entries that came in now (or would, with dryRun). */
  imported: { sessions: number; entries: number };
  /** Sessions that were already there in full from an earlier import. */
  alreadyThere: number;
  problems: ImportProblem[];
  /**
   * Agents the sessions belong to that sessiond's config does not list: their sessions come in but run no
   * turn until the agent is added to `agents` or mapped to one (`--agent-map work=main`).
   */
  unconfiguredAgents: Array<{ agent: string; sessions: number }>;
  /** Per session, what its key rests on that the peer's data does not say (new messages may miss it). */
  assumptions: ImportAssumption[];
  summary: ImportSummary;
}

const APPEND_CHUNK = 500;

/**
 * Writes another system's sessions into a store, key by key, generations in order. Idempotent: every
 * entry's idempotency key comes from its source, so a second run adds nothing. A key that already has a
 * current session from elsewhere is left alone and reported, never overwritten or reset.
 */
export async function importSessions(
  store: Store,
  source: ImportSource,
  read: SourceRead,
  options: ImportOptions = {},
): Promise<ImportReport> {
  const report: ImportReport = {
    source,
    dryRun: options.dryRun === true,
    read: read.sessions.length,
    imported: { sessions: 0, entries: 0 },
    alreadyThere: 0,
    problems: [...read.problems],
    leftOut: [...(read.leftOut ?? [])],
    assumptions: [],
    unconfiguredAgents: [],
    summary: {
      sessions: 0,
      entries: 0,
      messages: 0,
      toolCalls: 0,
      toolResults: 0,
      summaries: 0,
      titles: 0,
      problems: 0,
    },
  };
  const routing = options.routing ?? defaultRoutingConfig();
  const byKey = planKeys(read.sessions, routing, report.problems);
  report.unconfiguredAgents = unconfiguredAgents(
    [...byKey.values()].flat().map((s) => s.init),
    routing.agents,
  );
  for (const [key, sessions] of byKey)
    for (const s of sessions)
      for (const assumed of s.assumed) report.assumptions.push({ file: s.file, key, assumed });
  let done = 0;
  for (const [key, sessions] of byKey) {
    if (options.erased?.(key)) {
      // The file names the source's session; the key itself is not repeated in the report.
      for (const s of sessions)
        report.leftOut.push({ file: s.file, reason: "its person was erased (sessiond forget --subject)" });
      done += sessions.length;
      continue;
    }
    try {
      await importKey(store, key, sessions, source, report);
    } catch (error) {
      if (!isSessiondError(error) || error.code === "STORE_UNAVAILABLE" || error.code === "STORE_CLOSED")
        throw error;
      report.problems.push({ file: sessions[0]?.file ?? "", reason: `${key}: ${error.message}` });
    }
    done += sessions.length;
    options.onProgress?.(done, read.sessions.length);
  }
  report.summary.sessions = report.imported.sessions;
  report.summary.entries = report.imported.entries;
  report.summary.problems = report.problems.length;
  return report;
}

function count(summary: ImportSummary, inputs: readonly EntryInput[]): void {
  for (const input of inputs) {
    if (input.type === "compaction") summary.summaries++;
    else if (input.type === "title") summary.titles++;
    else if (input.type === "message") {
      summary.messages++;
      if (input.role === "tool") summary.toolResults++;
      summary.toolCalls += input.toolCalls?.length ?? 0;
    }
  }
}

async function importKey(
  store: Store,
  key: string,
  sessions: Routed[],
  source: ImportSource,
  report: ImportReport,
): Promise<void> {
  const planned = sessions
    .map((s) => ({ session: s, inputs: sessionInputs(s, source) }))
    .filter((p) => p.inputs.length > 0);
  // Which of the key's generations came from these source sessions: by the first entry's idempotency key.
  const bySourceKey = new Map<string, Session>();
  const generations = await store.generations(key);
  for (const generation of generations) {
    const first = (await store.readEntries(generation.id, { limit: 1 }))[0];
    if (first?.idempotencyKey) bySourceKey.set(first.idempotencyKey, generation);
  }
  const current = generations.find((g) => g.state === "active");
  const ours = new Set(planned.map((p) => p.inputs[0]?.idempotencyKey));
  const currentFirst = current && [...bySourceKey].find(([, g]) => g.id === current.id)?.[0];
  if (current && !ours.has(currentFirst)) {
    report.problems.push({
      file: sessions[0]?.file ?? "",
      reason: `${key}: this store already has a current session for the key that did not come from this import; left alone`,
    });
    return;
  }
  for (const { session, inputs } of planned) {
    const existing = bySourceKey.get(inputs[0]?.idempotencyKey ?? "");
    if (existing?.state === "archived") {
      report.alreadyThere++;
      continue;
    }
    const have = existing
      ? new Set((await store.readEntries(existing.id)).map((e) => e.idempotencyKey))
      : new Set();
    const missing = inputs.filter((input) => !have.has(input.idempotencyKey));
    if (missing.length === 0 && !(session.archived && existing?.state === "active")) {
      report.alreadyThere++;
      continue;
    }
    report.imported.sessions++;
    report.imported.entries += missing.length;
    count(report.summary, missing);
    if (report.dryRun) continue;
    // All of them, in order: the store skips those already there and numbers the rest after them.
    for (let i = 0; i < inputs.length; i += APPEND_CHUNK) {
      await store.append(key, inputs.slice(i, i + APPEND_CHUNK), {
        init: {
          ...session.init,
          ...(session.createdAt !== undefined ? { createdAt: session.createdAt } : {}),
        },
      });
    }
    if (session.archived) await store.archive(key, session.resetCause ?? "manual");
  }
}
