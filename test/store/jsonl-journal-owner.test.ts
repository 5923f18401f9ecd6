import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  journalName,
  openJournals,
  ownerMayBeRunning,
  parseJournalName,
  selfOwner,
} from "../../src/store/jsonl/journal-owner.js";

/** The parent process (vitest's): alive, and not this one. */
const parent = process.ppid;
const startOf = (pid: number) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]!;
};
const running = (owner: { pid: number; start: string; boot: string }) => {
  const name = journalName(owner, "0badf00d");
  expect(parseJournalName(name)).toEqual(owner);
  return ownerMayBeRunning(name, owner);
};

describe.runIf(process.platform === "linux")("JSONL journal owners", () => {
  const { boot } = selfOwner();

  it("owns a journal only while the same process runs: same PID, same start time, same boot", () => {
    expect(running({ pid: parent, start: startOf(parent), boot })).toBe(true);
    // The PID is alive but another process holds it now (reused), or it was before a reboot.
    expect(running({ pid: parent, start: String(Number(startOf(parent)) + 1), boot })).toBe(false);
    expect(running({ pid: parent, start: startOf(parent), boot: "0123456789abcdef0123456789abcdef" })).toBe(
      false,
    );
    // PID 1 is always alive (and answers kill(pid, 0) with EPERM to other users): that proves nothing either.
    expect(running({ pid: 1, start: "99999999", boot })).toBe(false);
  });

  it("a journal under this process's PID belongs to an open store of it, or to nobody", () => {
    const me = selfOwner();
    const name = journalName(me, "feedf00d");
    expect(ownerMayBeRunning(name, me)).toBe(false);
    openJournals.add(name);
    expect(ownerMayBeRunning(name, me)).toBe(true);
    openJournals.delete(name);
    // A predecessor under the same PID (the same container's PID 1 before a restart).
    expect(ownerMayBeRunning(name, { ...me, start: "1" })).toBe(false);
  });

  it("reads journals named before owners were recorded (PID only)", () => {
    expect(parseJournalName("journal-123-0badf00d.jsonl")).toEqual({ pid: 123, start: "", boot: "" });
    expect(ownerMayBeRunning("journal-1-0badf00d.jsonl", { pid: parent, start: "", boot: "" })).toBe(true);
  });
});
