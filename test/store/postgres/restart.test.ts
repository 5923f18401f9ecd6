import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isSessiondError } from "../../../src/model/errors.js";
import { PostgresStore } from "../../../src/store/postgres/postgres-store.js";
import { type PostgresCluster, startPostgres } from "../../support/postgres.js";

let cluster: PostgresCluster;
beforeAll(async () => {
  cluster = await startPostgres();
});
afterAll(() => cluster?.remove());

const init = { agent: "main", channel: "restart", createdBy: "u" };

describe("PostgreSQL going away under load", () => {
  it("fails the writes that could not commit with STORE_UNAVAILABLE, reconnects, and loses no acknowledged entry", async (ctx) => {
    if (!cluster.restartable) ctx.skip();
    const store = await PostgresStore.open({ url: await cluster.createDatabase() });
    const acked: Array<{ key: string; seq: number; id: string }> = [];
    const failures: unknown[] = [];
    let stopAt = 500;
    let restarted: Promise<void> | undefined;
    let firstFailure!: () => void;
    const failed = new Promise<void>((resolve) => {
      firstFailure = resolve;
    });
    const writer = async (n: number) => {
      const key = `restart:${n}`;
      for (let i = 0; acked.length < 1500; i++) {
        try {
          const { entries } = await store.append(
            key,
            [{ type: "message", role: "user", content: `${n}/${i}` }],
            { init },
          );
          acked.push({ key, seq: entries[0]!.seq, id: entries[0]!.id });
        } catch (error) {
          failures.push(error);
          firstFailure();
          // Wait for the server to be back instead of spinning against a closed socket.
          await restarted;
        }
        if (acked.length >= stopAt && !restarted) {
          stopAt = Number.POSITIVE_INFINITY;
          restarted = (async () => {
            await cluster.stop("immediate");
            await failed;
            await cluster.start();
          })();
        }
      }
    };
    await Promise.all(Array.from({ length: 20 }, (_, n) => writer(n)));
    expect(failures.length).toBeGreaterThan(0);
    for (const error of failures) {
      expect(isSessiondError(error, "STORE_UNAVAILABLE")).toBe(true);
      expect(["unknown", "not-written"]).toContain(
        (error as { details: { outcome: string } }).details.outcome,
      );
    }
    // Every acknowledged entry is there, under its seq; each log is gap-free.
    const byKey = new Map<string, Map<number, string>>();
    for (const a of acked) byKey.set(a.key, (byKey.get(a.key) ?? new Map()).set(a.seq, a.id));
    for (const [key, acks] of byKey) {
      const session = (await store.getSession(key))!;
      const entries = await store.readEntries(session.id);
      expect(entries.map((e) => e.seq)).toEqual(Array.from({ length: session.entryCount }, (_, i) => i + 1));
      const ids = new Map(entries.map((e) => [e.seq, e.id]));
      for (const [seq, id] of acks) expect(ids.get(seq)).toBe(id);
    }
    await store.close();
  });
});
