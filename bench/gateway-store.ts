import Database from "better-sqlite3";
import { createEngine } from "../src/engine.js";
import type { Envelope } from "../src/model/envelope.js";
import type { Session } from "../src/model/session.js";
import { openStore } from "../src/store/open.js";
import { newSession, planAppend } from "../src/store/session-log.js";
import { entryInsertParams, sessionInsertParams, sessionUpdateParams } from "../src/store/sql/rows.js";
import { SQL } from "../src/store/sqlite/sqlite-store.js";
import { INSERT_ENTRY_SQL, messageContents } from "./support.js";

const BLOCK = 5_000;

/** The webhook peer of the i-th benchmark session. */
export function webhookPeer(i: number): string {
  return `peer-${i}`;
}

/** The envelope `POST /api/webhook` builds for `{ peer, message }`. */
export function webhookEnvelope(peer: string, text: string): Envelope {
  return {
    channel: "webhook",
    chat: { type: "direct", id: peer },
    sender: { id: peer },
    text,
    entryPoint: { kind: "webhook", gatewayToken: true },
  };
}

/**
 * Fills a new SQLite store with `count` webhook sessions (the keys `POST /api/webhook` routes `peer-<i>` to),
 * each with one exchange (a user message and a reply), straight into SQLite with the store's own row code:
 * `newSession`, `planAppend` and the row helpers, synchronous=OFF, one transaction per block.
 */
export async function prefillWebhookSessions(path: string, count: number): Promise<{ buildMs: number }> {
  const start = performance.now();
  await (await openStore({ backend: "sqlite", path })).close();
  const router = await createEngine({
    store: { backend: "memory" },
    titles: { enabled: false },
    lifecycle: { sweepIntervalMs: 0 },
  });
  const db = new Database(path);
  try {
    db.pragma("synchronous = OFF");
    const insertSession = db.prepare(SQL.insertSession);
    const updateSession = db.prepare(SQL.updateSession);
    const insertEntry = db.prepare(INSERT_ENTRY_SQL);
    const user = messageContents(997, 120, 23);
    const reply = messageContents(997, 300, 29);
    const noIdempotency = { findIdempotent: () => undefined };
    const now = Date.now() - 60_000;
    const block = db.transaction((first: number, last: number) => {
      for (let i = first; i < last; i++) {
        const text = user[i % user.length] ?? "";
        const route = router.route(webhookEnvelope(webhookPeer(i), text));
        const init = {
          agent: route.agent,
          channel: route.channel,
          chatType: route.chatType,
          createdBy: route.createdBy,
        };
        const session: Session = newSession(route.key, init, 1, now);
        const sid = Number(insertSession.run(sessionInsertParams(session)).lastInsertRowid);
        const plan = planAppend(
          session,
          [
            { type: "message", role: "user", content: text },
            { type: "message", role: "assistant", content: reply[i % reply.length] ?? "" },
          ],
          noIdempotency,
          now,
        );
        for (const entry of plan.fresh) insertEntry.run(entryInsertParams(sid, entry));
        updateSession.run(sessionUpdateParams(sid, session));
      }
    });
    for (let first = 0; first < count; first += BLOCK) block(first, Math.min(count, first + BLOCK));
    db.pragma("wal_checkpoint(TRUNCATE)");
  } finally {
    db.close();
    await router.close();
  }
  return { buildMs: performance.now() - start };
}

/** The token the benchmark's gateway is started with. */
export const BENCH_TOKEN = "bench-token-0123456789abcdef";
