import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { requiredIdentifiers } from "../../src/compaction/identifiers.js";
import { extractIdentifiers, summarizeOffline } from "../../src/compaction/summarizers/offline.js";
import { type CompactionThread, compactionThread } from "../../src/compaction/thread.js";
import { builtModule } from "../../src/config/package-root.js";
import type { SummaryRequest } from "../../src/model/summarizer.js";

const PROGRAM = builtModule(
  new URL("../../src/compaction/thread.ts", import.meta.url).href,
  "thread-program",
);

function request(n: number): SummaryRequest {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    lines.push(
      `USER: Deploy build v2.${i}.0 to host api-${i}.example.com and check ticket OPS-${100 + i}.`,
      `ASSISTANT: Deployed v2.${i}.0; the health check at https://api-${i}.example.com/health answered 200.`,
    );
  }
  return { transcript: lines.join("\n"), maxChars: 800, identifiers: ["OPS-101", "v2.3.0"] };
}

describe("the compaction thread", () => {
  const opened: CompactionThread[] = [];
  const open = (script: string | undefined) => {
    const t = compactionThread(script ?? null);
    opened.push(t);
    return t;
  };
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((t) => t.close()));
  });

  it("starts from the build (npm test builds first)", () => {
    expect(PROGRAM).toMatch(/dist[/\\]src[/\\]compaction[/\\]thread-program\.js$/);
  });

  it("writes on the thread the offline summaries the calling thread writes, several in flight at once", async () => {
    const thread = open(PROGRAM);
    const requests = [request(20), request(35), request(50)];
    const results = await Promise.all(requests.map((r) => thread.offline.summarize(r)));
    expect(results.map((r) => r.summary)).toEqual(requests.map((r) => summarizeOffline(r)));
    expect(thread.threaded).toBe(3);
    expect(thread.offline.name).toBe("offline");
  });

  it("finds on the thread the identifiers the calling thread finds", async () => {
    const thread = open(PROGRAM);
    const text = request(40).transcript;
    expect(await thread.identifiers(text, 16, 2000)).toEqual(requiredIdentifiers(text, 16, 2000));
    expect(await thread.identifiers(text, 16, 2000)).toContain("v2.0.0");
    expect(thread.threaded).toBe(2);
  });

  it("finds the identifiers and writes the summary keeping them in one piece of work, as the two steps do", async () => {
    for (const script of [PROGRAM, undefined]) {
      const thread = open(script);
      const { transcript, maxChars } = request(40);
      const source = { text: transcript, max: 16 };
      const kept = await thread.offline.summarizeKeeping!({ transcript, maxChars }, source);
      const identifiers = requiredIdentifiers(source.text, source.max, maxChars);
      expect(kept.identifiers).toEqual(identifiers);
      expect(kept.summary).toBe(
        summarizeOffline({ transcript, maxChars, identifiers }, extractIdentifiers(source.text)),
      );
      expect(thread.threaded).toBe(script ? 1 : 0);
    }
  });

  it("passes a refusal back with its code", async () => {
    const thread = open(PROGRAM);
    await expect(thread.offline.summarize({ ...request(3), maxChars: 0 })).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
  });

  it("rejects work whose signal is aborted", async () => {
    const thread = open(PROGRAM);
    const controller = new AbortController();
    controller.abort(new Error("turn cancelled"));
    await expect(thread.offline.summarize({ ...request(3), signal: controller.signal })).rejects.toThrow(
      "turn cancelled",
    );
  });

  it("rejects work aborted while on the thread, and goes on with the next", async () => {
    const thread = open(PROGRAM);
    const controller = new AbortController();
    const aborted = thread.offline.summarize({ ...request(200), signal: controller.signal });
    controller.abort(new Error("shutting down"));
    await expect(aborted).rejects.toThrow("shutting down");
    const r = request(4);
    expect((await thread.offline.summarize(r)).summary).toBe(summarizeOffline(r));
  });

  it("does in the calling thread what a dying thread took with it", async () => {
    // A program that exits on the first piece of work it gets, every time it is started.
    const dir = mkdtempSync(join(tmpdir(), "sessiond-thread-"));
    const dying = join(dir, "dying.mjs");
    writeFileSync(
      dying,
      'import { parentPort } from "node:worker_threads";\nparentPort.on("message", () => process.exit(3));\n',
    );
    const thread = open(dying);
    for (const n of [5, 6, 7, 8, 9]) {
      const r = request(n);
      expect((await thread.offline.summarize(r)).summary).toBe(summarizeOffline(r));
    }
    expect(await thread.identifiers("see OPS-7 and OPS-7", 4, 100)).toEqual(["OPS-7"]);
    expect(thread.threaded).toBe(0);
  });

  it("works in the calling thread when there is no build to start a thread from", async () => {
    const thread = open(undefined);
    const r = request(10);
    expect((await thread.offline.summarize(r)).summary).toBe(summarizeOffline(r));
    expect(thread.threaded).toBe(0);
  });
});
