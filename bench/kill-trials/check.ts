import type { Entry } from "../../src/model/entry.js";
import type { Session } from "../../src/model/session.js";
import { openStore, type StoreConfig } from "../../src/store/open.js";
import type { Store } from "../../src/store/store.js";
import type { Driver, SentInput } from "./clients.js";

/** Where one user entry is stored. */
export interface StoredAt {
  key: string;
  generation: number;
  seq: number;
  idempotencyKey?: string;
}

/** What the store holds of the inputs one driver's clients sent. */
export interface DriverCount {
  sent: number;
  acked: number;
  /** Acknowledged and stored exactly once. */
  ackedOnce: number;
  /** Acknowledged and not stored. */
  lost: number;
  /** Not acknowledged (the gateway was killed) but stored once: recovery ran it or noted it. */
  unackedStored: number;
  /** Stored more than once, acknowledged or not. */
  doubled: number;
}

export interface StoreCheck {
  drivers: Record<Driver, DriverCount>;
  /** Each input stored twice or more: its text and where. */
  doubles: Array<{ text: string; stored: StoredAt[] }>;
  /** Idempotency keys on two or more user entries (over every key and generation). */
  repeatedKeys: Array<{ idempotencyKey: string; stored: StoredAt[] }>;
  /** Sessions (every generation) and user entries read. */
  sessions: number;
  userEntries: number;
}

/** Reads every generation of every key from the store and counts how each sent input is stored. */
export async function checkStore(config: StoreConfig, sent: readonly SentInput[]): Promise<StoreCheck> {
  const store = await openStore(config);
  try {
    const byText = new Map<string, StoredAt[]>();
    const byKey = new Map<string, StoredAt[]>();
    const sessions = await allSessions(store);
    let userEntries = 0;
    for (const session of sessions) {
      for (const entry of await allEntries(store, session.id)) {
        if (entry.type !== "message" || entry.role !== "user") continue;
        userEntries++;
        const at: StoredAt = {
          key: session.key,
          generation: session.generation,
          seq: entry.seq,
          ...(entry.idempotencyKey ? { idempotencyKey: entry.idempotencyKey } : {}),
        };
        push(byText, entry.content, at);
        if (entry.idempotencyKey) push(byKey, entry.idempotencyKey, at);
      }
    }
    const drivers = { chat: emptyCount(), async: emptyCount(), openai: emptyCount() };
    const doubles: StoreCheck["doubles"] = [];
    for (const input of sent) {
      const count = drivers[input.driver];
      const stored = byText.get(input.text) ?? [];
      count.sent++;
      if (input.acked) count.acked++;
      if (stored.length > 1) {
        count.doubled++;
        doubles.push({ text: input.text, stored });
      } else if (stored.length === 1) {
        if (input.acked) count.ackedOnce++;
        else count.unackedStored++;
      } else if (input.acked) count.lost++;
    }
    const repeatedKeys = [...byKey]
      .filter(([, stored]) => stored.length > 1)
      .map(([idempotencyKey, stored]) => ({ idempotencyKey, stored }));
    return { drivers, doubles, repeatedKeys, sessions: sessions.length, userEntries };
  } finally {
    await store.close();
  }
}

function emptyCount(): DriverCount {
  return { sent: 0, acked: 0, ackedOnce: 0, lost: 0, unackedStored: 0, doubled: 0 };
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

async function allSessions(store: Store): Promise<Session[]> {
  const sessions: Session[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.listSessions({
      includeArchived: true,
      limit: 1000,
      ...(cursor ? { cursor } : {}),
    });
    sessions.push(...page.sessions);
    cursor = page.nextCursor;
  } while (cursor);
  return sessions;
}

async function allEntries(store: Store, sessionId: string): Promise<Entry[]> {
  const entries: Entry[] = [];
  for (;;) {
    const last = entries.at(-1);
    const page = await store.readEntries(sessionId, { limit: 1000, ...(last ? { afterSeq: last.seq } : {}) });
    entries.push(...page);
    if (page.length < 1000) return entries;
  }
}
