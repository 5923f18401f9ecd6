import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { InboxWrite } from "../../../src/store/driver.js";
import { runFenced } from "../../../src/store/fence.js";
import { PostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { type PostgresCluster, startPostgres } from "../../support/postgres.js";
import { inboxContract } from "../inbox-contract.js";

let cluster: PostgresCluster;
const stores: PostgresStore[] = [];
beforeAll(async () => {
  cluster = await startPostgres();
});
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close().catch(() => {})));
  await cluster?.remove();
});

// Each test's inbox in a database of its own; `reopen` opens that database again through a new store.
let url = "";
const storeOn = async (where: string, leaseTtlMs?: number) => {
  const store = await PostgresStore.open({ url: where, ...(leaseTtlMs ? { leaseTtlMs } : {}) });
  stores.push(store);
  return store;
};
const inboxOn = async (where: string) => (await storeOn(where)).inbox();

inboxContract("postgres (the store's writer)", {
  open: async () => {
    url = await cluster.createDatabase();
    return inboxOn(url);
  },
  reopen: () => inboxOn(url),
});

const envelope = {
  channel: "web",
  chat: { type: "direct" as const, id: "a" },
  sender: { id: "a" },
  text: "hi",
};
const init = { agent: "main", channel: "web", createdBy: "test" };
const msg = (content: string) => ({ type: "message" as const, role: "user" as const, content });
const admission = (id: string, key: string, dedupeKey?: string): InboxWrite => ({
  kind: "admit",
  item: {
    id,
    key,
    envelope,
    state: "pending",
    admittedAt: 1,
    updatedAt: 1,
    ...(dedupeKey ? { dedupeKey } : {}),
  },
});

describe("the PostgreSQL inbox in the store's write set", () => {
  it("commits an input's admission with its entry, and nothing of either when the lease was lost", async () => {
    const where = await cluster.createDatabase();
    const store = await storeOn(where);
    await store.append("web:a", [msg("first")], { init });
    const first = await store.append("web:a", [msg("kept")], { inbox: () => [admission("01KEPT", "web:a")] });
    expect(first.entries).toHaveLength(1);
    expect(await store.inbox().get("01KEPT")).toMatchObject({ state: "pending", key: "web:a" });

    // The turn's lease moved on (another process took the key): its entry and its admission both fail.
    const fence = await store.leases.acquire("web:a");
    await store.pool.query("UPDATE leases SET epoch = epoch + 1 WHERE key = 'web:a'");
    await expect(
      runFenced(fence, () =>
        store.append("web:a", [msg("lost")], { inbox: () => [admission("01LOST", "web:a")] }),
      ),
    ).rejects.toMatchObject({ code: "LEASE_LOST" });
    expect(await store.inbox().get("01LOST")).toBeUndefined();
    const session = await store.getSession("web:a");
    expect((await store.readEntries(session!.id)).map((e) => e.type === "message" && e.content)).toEqual([
      "first",
      "kept",
    ]);
  });

  it("ends an item with the reply's entry, and the reply's commit also marks the end", async () => {
    const store = await storeOn(await cluster.createDatabase());
    const inbox = store.inbox();
    const { item } = await inbox.admit({ key: "web:a", envelope, at: 1 });
    const reply = await store.append("web:a", [msg("reply")], {
      init,
      inbox: (appended) => [
        { kind: "end", id: item.id, state: "done", at: 2, outcome: { replyId: appended.entries[0]!.id } },
      ],
    });
    expect(await inbox.get(item.id)).toMatchObject({
      state: "done",
      updatedAt: 2,
      outcome: { replyId: reply.entries[0]!.id },
    });
    expect(await inbox.unfinished()).toEqual([]);
  });

  it("admits an input two gateways receive at once exactly once: the other finds the stored item", async () => {
    const where = await cluster.createDatabase();
    const [a, b] = [await storeOn(where), await storeOn(where)];
    for (let round = 0; round < 10; round++) {
      const input = { key: "web:a", envelope, dedupeKey: `web:a\nm${round}`, at: round };
      const results = await Promise.all([a.inbox().admit(input), b.inbox().admit(input)]);
      expect(results.map((r) => r.admitted).sort()).toEqual([false, true]);
      expect(results[0]!.item.id).toBe(results[1]!.item.id);
    }
    expect(await a.inbox().unfinished()).toHaveLength(10);
  });

  it("leaves an item another process took over as it is when the old owner's reply ends it", async () => {
    const where = await cluster.createDatabase();
    const a = await storeOn(where);
    const b = await storeOn(where);
    const { item } = await a.inbox().admit({ key: "web:a", envelope, at: 1 });
    // a's heartbeat lapses, as if it had been paused: b takes its item over.
    await a.pool.query("UPDATE inbox_owners SET expires_at = clock_timestamp() - interval '1 second'");
    expect((await b.inbox().takeOver()).map((i) => i.id)).toEqual([item.id]);
    // a's reply is stored (its turn ran), but the item is b's to end now.
    await a.append("web:a", [msg("late reply")], {
      init,
      inbox: () => [{ kind: "end", id: item.id, state: "done", at: 5 }],
    });
    expect(await b.inbox().get(item.id)).toMatchObject({ state: "pending" });
    expect(await b.inbox().transition(item.id, "done", 6)).toBe(true);
    expect(await a.inbox().transition(item.id, "failed", 7)).toBe(false);
  });
});
