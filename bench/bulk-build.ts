import { isDeepStrictEqual } from "node:util";
import Database from "better-sqlite3";
import type { Entry } from "../src/model/entry.js";
import type { Session } from "../src/model/session.js";
import { openStore } from "../src/store/open.js";
import { newSession, planAppend } from "../src/store/session-log.js";
import { entryInsertParams, sessionInsertParams, sessionUpdateParams } from "../src/store/sql/rows.js";
import { SQL } from "../src/store/sqlite/sqlite-store.js";
import { BENCH_INIT, benchKey, INSERT_ENTRY_SQL, messageContents, userMessage } from "./support.js";

const BLOCK = 100;

export interface BuildResult {
  sessions: number;
  entries: number;
  buildMs: number;
}

/**
 * Builds a store of `sessions` x `perSession` user messages straight into SQLite, with the store's
 * own code for the rows: `newSession`, `planAppend` (seq, ids, derived session fields) and the row
 * helpers. The store creates the schema; rows go in with synchronous=OFF, one transaction per block.
 */
export async function buildStore(path: string, sessions: number, perSession: number): Promise<BuildResult> {
  const start = performance.now();
  await (await openStore({ backend: "sqlite", path })).close();

  const db = new Database(path);
  db.pragma("synchronous = OFF");
  db.pragma("cache_size = -65536");
  const insertSession = db.prepare(SQL.insertSession);
  const updateSession = db.prepare(SQL.updateSession);
  const insertEntry = db.prepare(INSERT_ENTRY_SQL);
  const contents = messageContents(997, 200, 7);
  const noIdempotency = { findIdempotent: () => undefined };
  let clock = Date.now() - (sessions / BLOCK) * perSession;

  const live: Array<{ sid: number; session: Session }> = [];
  db.transaction(() => {
    for (let s = 0; s < sessions; s++) {
      const session = newSession(benchKey(s), BENCH_INIT, 1, clock);
      const info = insertSession.run(sessionInsertParams(session));
      live.push({ sid: Number(info.lastInsertRowid), session });
    }
  })();

  // Sessions in blocks of BLOCK, round-robin within a block: each block's pages split as under BLOCK
  // concurrent chats, while the pages being written stay few enough to build 1M rows in seconds.
  const appendBlock = db.transaction((first: number, last: number) => {
    for (let seq = 1; seq <= perSession; seq++) {
      // One millisecond per round, as one group commit: ids within it increment, as in the store.
      const now = clock++;
      for (let s = first; s < last; s++) {
        const current = live[s];
        if (!current) throw new Error(`no session ${s}`);
        const content = contents[(s * 31 + seq) % contents.length] ?? "";
        const plan = planAppend(current.session, [userMessage(content)], noIdempotency, now);
        for (const entry of plan.fresh) insertEntry.run(entryInsertParams(current.sid, entry));
      }
    }
  });
  for (let first = 0; first < sessions; first += BLOCK) appendBlock(first, Math.min(sessions, first + BLOCK));

  db.transaction(() => {
    for (const { sid, session } of live) updateSession.run(sessionUpdateParams(sid, session));
  })();
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();

  await verify(path, live[Math.floor(sessions / 2)]?.session, perSession);
  return { sessions, entries: sessions * perSession, buildMs: performance.now() - start };
}

/** Reads one session back through the store and checks it is what the store itself would have written. */
async function verify(path: string, expected: Session | undefined, perSession: number): Promise<void> {
  if (!expected) throw new Error("bulk build: no session to verify");
  const store = await openStore({ backend: "sqlite", path });
  try {
    const context = await store.loadContext(expected.key);
    const entries: Entry[] = context?.entries ?? [];
    const problems: string[] = [];
    if (!isDeepStrictEqual(context?.session, expected)) problems.push("session row differs");
    if (entries.length !== perSession) problems.push(`${entries.length} entries, expected ${perSession}`);
    if (entries.some((e, i) => e.seq !== i + 1 || e.sessionId !== expected.id || e.type !== "message")) {
      problems.push("entries are not seq 1..n messages of the session");
    }
    if (problems.length > 0) throw new Error(`bulk build does not match the store: ${problems.join("; ")}`);
  } finally {
    await store.close();
  }
}
