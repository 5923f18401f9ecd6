import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { summarizeOffline } from "../../../src/compaction/summarizers/offline.js";
import {
  offlineThreadSummarizer,
  type ThreadedSummarizer,
} from "../../../src/compaction/summarizers/offline-worker.js";
import { builtModule } from "../../../src/config/package-root.js";
import type { SummaryRequest } from "../../../src/model/summarizer.js";

const THREAD_SCRIPT = builtModule(
  new URL("../../../src/compaction/summarizers/offline-worker.ts", import.meta.url).href,
  "offline-thread",
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

describe("the offline summariser on its own thread", () => {
  const opened: ThreadedSummarizer[] = [];
  const open = (script: string | undefined) => {
    const s = offlineThreadSummarizer(script ?? null);
    opened.push(s);
    return s;
  };
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()));
  });

  it("starts its thread from the build (npm test builds first)", () => {
    expect(THREAD_SCRIPT).toMatch(/dist[/\\]src[/\\]compaction[/\\]summarizers[/\\]offline-thread\.js$/);
  });

  it("writes on the thread the same summary as in the calling thread, for requests in flight at once", async () => {
    const summarizer = open(THREAD_SCRIPT);
    const requests = [request(20), request(35), request(50)];
    const results = await Promise.all(requests.map((r) => summarizer.summarize(r)));
    expect(results.map((r) => r.summary)).toEqual(requests.map((r) => summarizeOffline(r)));
    expect(summarizer.threaded).toBe(3);
    expect(summarizer.name).toBe("offline");
  });

  it("passes a refusal back with its code", async () => {
    const summarizer = open(THREAD_SCRIPT);
    await expect(summarizer.summarize({ ...request(3), maxChars: 0 })).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
  });

  it("rejects a request whose signal is aborted", async () => {
    const summarizer = open(THREAD_SCRIPT);
    const controller = new AbortController();
    controller.abort(new Error("turn cancelled"));
    await expect(summarizer.summarize({ ...request(3), signal: controller.signal })).rejects.toThrow(
      "turn cancelled",
    );
  });

  it("summarises in the calling thread what a dying thread took with it", async () => {
    // A thread that exits on the first request it gets, every time it is started.
    const dir = mkdtempSync(join(tmpdir(), "sessiond-thread-"));
    const dying = join(dir, "dying.mjs");
    writeFileSync(
      dying,
      'import { parentPort } from "node:worker_threads";\nparentPort.on("message", () => process.exit(3));\n',
    );
    const summarizer = open(dying);
    for (const n of [5, 6, 7, 8, 9]) {
      const r = request(n);
      expect((await summarizer.summarize(r)).summary).toBe(summarizeOffline(r));
    }
    expect(summarizer.threaded).toBe(0);
  });

  it("summarises in the calling thread when there is no build to start a thread from", async () => {
    const summarizer = offlineThreadSummarizer(null);
    const r = request(10);
    expect((await summarizer.summarize(r)).summary).toBe(summarizeOffline(r));
    expect(summarizer.threaded).toBe(0);
    await summarizer.close();
  });
});
