import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createEngine } from "../../src/engine.js";
import type { Envelope } from "../../src/model/envelope.js";
import { useTempDirs } from "../support/temp-dirs.js";
import { filesHolding, uniqueMarker } from "./scan.js";

const tempDir = useTempDirs();

function dm(peer: string, text: string): Envelope {
  return { channel: "telegram", chat: { type: "direct", id: peer }, sender: { id: peer }, text };
}

describe.each(["sqlite", "jsonl"] as const)("forks and rewinds of an incognito session on %s", (backend) => {
  it("stay in memory: the fork is incognito too, the rewound branch readable, nothing on disk", async () => {
    const dir = tempDir("sessiond-incognito-branches-");
    const store =
      backend === "sqlite"
        ? { backend, path: join(dir, "sessiond.db") }
        : { backend, path: join(dir, "sessions") };
    const secret = uniqueMarker();
    const engine = await createEngine({ dataDir: dir, store });
    try {
      await engine.turn(dm("1", `kept ${uniqueMarker()}`));
      await engine.turn(dm("2", `first ${secret}`), { incognito: true });
      await engine.turn(dm("2", `second ${secret}`));
      await engine.idle("telegram:2");
      const fork = await engine.fork("telegram:2", { atSeq: 2 });
      const forkKey = fork.session.key;
      expect(engine.isIncognito(forkKey)).toBe(true);
      await engine.turn(dm("2", `third ${secret}`), {});
      const forked = await engine.history(forkKey);
      expect(
        forked.filter((e) => e.type === "message").map((e) => e.type === "message" && e.content),
      ).toEqual([`first ${secret}`, expect.stringContaining(secret)]);
      const rewound = await engine.rewind("telegram:2", { toSeq: 3 });
      expect(rewound.current.key).toBe("telegram:2");
      const branches = await engine.branches("telegram:2");
      expect(branches.map((b) => b.kind).sort()).toEqual(
        expect.arrayContaining(["current", "fork", "rewound"]),
      );
      // A stored session cannot be forked into an incognito key, nor the other way round silently.
      await expect(engine.fork("telegram:1", { toKey: "telegram:2" })).rejects.toMatchObject({
        code: "SESSION_INCOGNITO",
      });
      await engine.store.sync();
      expect(filesHolding(dir, secret)).toEqual([]);
    } finally {
      await engine.close();
    }
    expect(filesHolding(dir, secret)).toEqual([]);
  });
});
