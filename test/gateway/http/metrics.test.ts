import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../../src/engine.js";
import { createMetrics, PENDING_OBSERVATIONS_MAX } from "../../../src/gateway/metrics/recorder.js";

describe("store commit metrics", () => {
  let dir: string;
  let engine: Engine | undefined;
  afterEach(async () => {
    await engine?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("counts the operations of every SQLite transaction, many appends sharing one", async () => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-metrics-"));
    engine = await createEngine({ dataDir: dir, store: { backend: "sqlite", path: join(dir, "s.db") } });
    const metrics = createMetrics(engine);
    const init = { agent: "main", channel: "t", createdBy: "u" };
    await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        engine!.store.append(`k${i}`, [{ type: "message", role: "user", content: `m${i}` }], { init }),
      ),
    );
    const text = await (await metrics.load()).metrics();
    metrics.stop();
    const sum = Number(/sessiond_store_commit_batch_size_sum (\d+)/.exec(text)?.[1]);
    const count = Number(/sessiond_store_commit_batch_size_count (\d+)/.exec(text)?.[1]);
    expect(sum).toBeGreaterThanOrEqual(40);
    expect(count).toBeGreaterThan(0);
    expect(count).toBeLessThan(40);
    expect(text).toMatch(/sessiond_append_entries_count 40/);
  });

  it("keeps observations made before prom-client loads, up to its buffer, and counts the ones it drops", async () => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-metrics-"));
    engine = await createEngine({ dataDir: dir, store: { backend: "memory" } });
    const metrics = createMetrics(engine);
    const init = { agent: "main", channel: "t", createdBy: "u" };
    // Each append is observed twice: its entries, and the commit that stored it.
    const appends = PENDING_OBSERVATIONS_MAX / 2 + 5;
    for (let i = 0; i < appends; i++)
      await engine.store.append("k", [{ type: "message", role: "user", content: `m${i}` }], { init });
    const text = await (await metrics.load()).metrics();
    metrics.stop();
    const figure = (name: string) => Number(new RegExp(`^${name} (\\d+)$`, "m").exec(text)?.[1]);
    expect(figure("sessiond_append_entries_count") + figure("sessiond_store_commit_batch_size_count")).toBe(
      PENDING_OBSERVATIONS_MAX,
    );
    expect(figure("sessiond_metrics_dropped_total")).toBe(2 * appends - PENDING_OBSERVATIONS_MAX);
  });
});
