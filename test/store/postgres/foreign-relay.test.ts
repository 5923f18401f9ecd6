import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEngine, type Engine } from "../../../src/engine.js";
import type { SessionEvent } from "../../../src/turns/events.js";
import { type PostgresCluster, startPostgres } from "../../support/postgres.js";
import { useTempDirs } from "../../support/temp-dirs.js";

let cluster: PostgresCluster;
beforeAll(async () => {
  cluster = await startPostgres();
});
afterAll(() => cluster?.remove());

const tempDir = useTempDirs();
const init = { agent: "main", channel: "relay", createdBy: "u" };

async function engineOn(url: string): Promise<Engine> {
  return createEngine({
    dataDir: tempDir("relay-"),
    store: { backend: "postgres", url },
    titles: { enabled: false },
  });
}

describe("another gateway's appends as events (foreign-events.ts)", () => {
  it("reach the listeners that want them, and not the local-only ones (a gateway's metrics)", async () => {
    const url = await cluster.createDatabase();
    const writer = await engineOn(url);
    const reader = await engineOn(url);
    try {
      const local: SessionEvent[] = [];
      reader.events.on((event) => local.push(event), { localOnly: true });
      const relayed = new Promise<SessionEvent>((resolve) => {
        reader.events.on((event) => {
          if (event.type === "appended" && event.key === "k2") resolve(event);
        });
      });
      // A local write of the reader's own: the local-only listener hears it.
      await reader.store.append("mine", [{ type: "message", role: "user", content: "here" }], { init });
      await writer.store.append("k1", [{ type: "message", role: "user", content: "one" }], { init });
      await writer.store.append("k2", [{ type: "message", role: "user", content: "two" }], { init });
      const event = await relayed;
      expect(event.type === "appended" && event.entries.map((e) => e.seq)).toEqual([1]);
      expect(local.filter((e) => e.type === "appended").map((e) => e.type === "appended" && e.key)).toEqual([
        "mine",
      ]);
    } finally {
      await writer.close();
      await reader.close();
    }
  });
});
