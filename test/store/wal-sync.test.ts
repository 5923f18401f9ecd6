import { appendFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { WalSync } from "../../src/store/sqlite/wal-sync.js";

function walFile(): string {
  const path = join(mkdtempSync(join(tmpdir(), "sessiond-walsync-")), "s.db-wal");
  writeFileSync(path, "");
  return path;
}

describe("WalSync", () => {
  it("fsyncs once per run of commits, and not at all when nothing was committed since", async () => {
    const path = walFile();
    const wal = new WalSync(path);
    await wal.sync();
    expect(wal.completed).toBe(0);
    appendFileSync(path, "frame 1");
    wal.committed();
    await Promise.all([wal.sync(), wal.sync()]);
    expect(wal.completed).toBe(1);
    await wal.sync();
    expect(wal.completed).toBe(1);
    await wal.close();
  });

  it("makes a small batch durable on the spot, so the barrier after it has nothing to do", async () => {
    const path = walFile();
    const wal = new WalSync(path);
    appendFileSync(path, "frame 1");
    wal.committed();
    wal.syncNow();
    expect(wal.completed).toBe(1);
    await wal.sync();
    wal.syncNow();
    expect(wal.completed).toBe(1);
    // A commit while an fsync is in flight gets one more fsync, begun after it.
    appendFileSync(path, "frame 2");
    wal.committed();
    const first = wal.sync();
    appendFileSync(path, "frame 3");
    wal.committed();
    await Promise.all([first, wal.sync()]);
    expect(wal.completed).toBe(3);
    await wal.close();
  });
});
