import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  applyRetention,
  DEFAULT_RETENTION,
  isSingleEventWebhookKey,
  planRetention,
  type RetentionItem,
} from "../../src/lifecycle/retention.js";
import { isSessiondError } from "../../src/model/errors.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { openStore } from "../../src/store/open.js";
import type { Store } from "../../src/store/store.js";

const DAY = 86_400_000;

describe("isSingleEventWebhookKey", () => {
  it.each([
    ["webhook:main:github:ts-1717000000000", true],
    ["webhook:main:alertmanager:ts-1", true],
    ["webhook:main:github:pr-42", false],
    ["webhook:main:github:ts", false],
    ["webhook-sop:main:deploy:ts-17", true],
    ["webhook-sop:main:deploy:batch-3", true],
    ["webhook-sop:main:deploy:run-3", false],
    ["webhook:main:deploy:batch-3", false],
    ["agent:main:telegram:direct:ts-1", false],
    ["p2p:webhook:main:ts-1", false],
  ])("%s → %s", (key, expected) => {
    expect(isSingleEventWebhookKey(key)).toBe(expected);
  });
});

const backends: Array<[string, (dir: string) => Promise<Store>]> = [
  ["memory", async () => new MemoryStore()],
  [
    "sqlite",
    (dir) => openStore({ backend: "sqlite", path: join(dir, "sessiond.db"), durability: "relaxed" }),
  ],
];

for (const [backend, open] of backends) {
  describe(`retention (${backend})`, () => {
    let dir: string;
    let store: Store;
    // The store stamps archiving with the real clock; "now" is 40 days later so those archives are old.
    const now = Date.now() + 40 * DAY;
    const init = { agent: "main", channel: "webhook", createdBy: "github" };

    const append = (key: string, ts: number) =>
      store.append(key, [{ type: "message", role: "user", content: "event", ts }], { init });

    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), "sessiond-retention-"));
      store = await open(dir);
      await append("webhook:main:github:ts-1", now - 8 * DAY);
      await append("webhook:main:github:ts-exact", now - 7 * DAY);
      await append("webhook:main:github:ts-2", now - 7 * DAY + 1);
      await append("webhook:main:github:pr-42", now - 300 * DAY);
      await append("webhook-sop:main:deploy:batch-7", now - 10 * DAY);
      await append("webhook-sop:main:deploy:ts-9", now - 10 * DAY);
      await append("webhook-sop:main:deploy:run-3", now - 10 * DAY);
      await append("agent:main:telegram:direct:u1", now - 300 * DAY);
      // A webhook session a scheduled reset archived: no current session left, only the old generation.
      await append("webhook:main:alert:ts-5", now - 20 * DAY);
      await store.archive("webhook:main:alert:ts-5", "idle");
      // A webhook key with an archived generation and an idle current one: goes as a whole key.
      await append("webhook:main:github:ts-3", now - 50 * DAY);
      await store.reset("webhook:main:github:ts-3", "daily");
      // An ordinary chat with an archived generation and a current one.
      await append("agent:main:web:direct:u2", now - 60 * DAY);
      await store.reset("agent:main:web:direct:u2", "trigger");
      await append("agent:main:web:direct:u2", now - DAY);
    });

    afterEach(async () => {
      await store.close();
      await rm(dir, { recursive: true, force: true });
    });

    const summary = (items: RetentionItem[]) =>
      items.map(({ key, scope, reason }) => `${reason} ${scope} ${key}`).sort();

    it("the dry run lists single-event webhook sessions idle for 7 days and deletes nothing", async () => {
      const plan = await planRetention(store, DEFAULT_RETENTION, now);
      expect(plan.webhookCutoff).toBe(now - 7 * DAY);
      expect(plan.archivedCutoff).toBeUndefined();
      expect(plan.truncated).toBe(false);
      expect(summary(plan.sessions)).toEqual([
        "webhook-idle generation webhook:main:alert:ts-5",
        "webhook-idle key webhook-sop:main:deploy:batch-7",
        "webhook-idle key webhook-sop:main:deploy:ts-9",
        "webhook-idle key webhook:main:github:ts-1",
        "webhook-idle key webhook:main:github:ts-3",
        "webhook-idle key webhook:main:github:ts-exact",
      ]);
      const ts1 = plan.sessions.find((i) => i.key === "webhook:main:github:ts-1");
      expect(ts1).toMatchObject({ lastActivityAt: now - 8 * DAY });
      expect(ts1?.sessionId).toBe((await store.getSession("webhook:main:github:ts-1"))?.id);
      const archived = plan.sessions.find((i) => i.key === "webhook:main:alert:ts-5");
      expect(archived?.archivedAt).toBeLessThan(now - 7 * DAY);

      // Nothing was touched.
      for (const item of plan.sessions) expect((await store.generations(item.key)).length).toBeGreaterThan(0);
      expect(await planRetention(store, DEFAULT_RETENTION, now)).toEqual(plan);
    });

    it("apply deletes what the plan lists and leaves everything else", async () => {
      const plan = await planRetention(store, DEFAULT_RETENTION, now);
      const result = await applyRetention(store, plan);
      expect(result).toEqual({
        keys: 5,
        generations: 1,
        sessions: 7,
        entries: expect.any(Number),
        skipped: 0,
      });
      expect(result.entries).toBeGreaterThanOrEqual(7);
      for (const item of plan.sessions) expect(await store.generations(item.key)).toEqual([]);
      for (const key of [
        "webhook:main:github:ts-2",
        "webhook:main:github:pr-42",
        "webhook-sop:main:deploy:run-3",
        "agent:main:telegram:direct:u1",
      ]) {
        expect((await store.getSession(key))?.state).toBe("active");
      }
      expect(await store.generations("agent:main:web:direct:u2")).toHaveLength(2);
      expect((await planRetention(store, DEFAULT_RETENTION, now)).sessions).toEqual([]);
    });

    it("archived generations are kept forever unless a retention period is configured", async () => {
      const policy = { webhookIdleDays: 7, archivedRetentionDays: 30 };
      const plan = await planRetention(store, policy, now);
      expect(plan.archivedCutoff).toBe(now - 30 * DAY);
      const expired = plan.sessions.filter((i) => i.reason === "archived-expired");
      expect(summary(expired)).toEqual(["archived-expired generation agent:main:web:direct:u2"]);
      const [old] = (await store.generations("agent:main:web:direct:u2")).slice(-1);
      expect(expired[0]?.sessionId).toBe(old?.id);
      // The archived generations of webhook keys are listed once, under the webhook rule.
      expect(plan.sessions.filter((i) => i.key === "webhook:main:github:ts-3")).toHaveLength(1);

      await applyRetention(store, plan);
      const left = await store.generations("agent:main:web:direct:u2");
      expect(left.map((s) => s.state)).toEqual(["active"]);

      const short = await planRetention(store, { webhookIdleDays: 7, archivedRetentionDays: 50 }, now);
      expect(short.sessions).toEqual([]);
    });

    it("leaves a key alone that had activity after the plan was made", async () => {
      const plan = await planRetention(store, DEFAULT_RETENTION, now);
      await append("webhook:main:github:ts-1", now);
      const result = await applyRetention(store, plan);
      expect(result.skipped).toBe(1);
      expect(result.keys).toBe(4);
      expect((await store.getSession("webhook:main:github:ts-1"))?.lastActivityAt).toBe(now);
      // Applying the same plan again finds everything gone already.
      expect(await applyRetention(store, plan)).toMatchObject({ keys: 0, generations: 0, skipped: 6 });
    });

    it("0 days turns a part off; negative days are rejected", async () => {
      expect(
        (await planRetention(store, { webhookIdleDays: 0, archivedRetentionDays: 0 }, now)).sessions,
      ).toEqual([]);
      const plan = await planRetention(store, { webhookIdleDays: 0, archivedRetentionDays: 30 }, now);
      expect(plan.webhookCutoff).toBeUndefined();
      expect(summary(plan.sessions)).toEqual([
        "archived-expired generation agent:main:web:direct:u2",
        "archived-expired generation webhook:main:alert:ts-5",
        "archived-expired generation webhook:main:github:ts-3",
      ]);
      let caught: unknown;
      try {
        await planRetention(store, { webhookIdleDays: -1 }, now);
      } catch (error) {
        caught = error;
      }
      expect(isSessiondError(caught, "INVALID_ARGUMENT")).toBe(true);
    });

    it("a limit cuts the plan short and says so; applying and planning again finishes the job", async () => {
      const first = await planRetention(store, DEFAULT_RETENTION, now, { limit: 2, pageSize: 1 });
      expect(first.sessions).toHaveLength(2);
      expect(first.truncated).toBe(true);
      await applyRetention(store, first);
      const rest = await planRetention(store, DEFAULT_RETENTION, now, { pageSize: 1 });
      expect(rest.truncated).toBe(false);
      expect(rest.sessions).toHaveLength(4);
    });
  });
}
