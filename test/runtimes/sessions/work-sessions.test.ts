import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ManualClock } from "../../../src/lifecycle/clock.js";
import {
  emptyWorkSessions,
  WORK_SESSIONS_FILE,
  WorkSessions,
  workSessionsSchema,
} from "../../../src/runtimes/sessions/work-sessions.js";
import { FileDocument, MemoryDocument } from "../../../src/runtimes/settings-document.js";

const fileAt = (path: string) => new FileDocument(path, workSessionsSchema, emptyWorkSessions, true);

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("work-sessions.json", () => {
  it("is read again when another process (the CLI beside a gateway) replaced it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-work-file-"));
    dirs.push(dir);
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const path = join(dir, WORK_SESSIONS_FILE);
    const gateway = new WorkSessions(fileAt(path), clock);
    const cli = new WorkSessions(fileAt(path), clock);
    expect(gateway.active("dev", "telegram:1")).toBeUndefined();
    await cli.start("dev", "telegram:1", 10);
    expect(gateway.active("dev", "telegram:1")).toMatchObject({ until: clock.now() + 10 * 60_000 });
    await cli.end("dev", "telegram:1");
    expect(gateway.active("dev", "telegram:1")).toBeUndefined();
  });

  it("ends by the clock, and takes 1 to 1,440 minutes", async () => {
    const clock = new ManualClock(0);
    const work = new WorkSessions(new MemoryDocument(emptyWorkSessions()), clock);
    await work.start("dev", "k", 1);
    clock.advance(59_999);
    expect(work.list({ agent: "dev" })).toHaveLength(1);
    clock.advance(1);
    expect(work.list({ agent: "dev" })).toEqual([]);
    for (const minutes of [0, 1441, 1.5]) {
      await expect(work.start("dev", "k", minutes)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    }
  });
});
