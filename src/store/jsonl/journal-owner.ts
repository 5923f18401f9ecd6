import { readFileSync } from "node:fs";

/**
 * Who wrote a journal, provably: a PID alone is not (a container's gateway is PID 1 on every start, PIDs
 * are reused after a reboot, and kill(pid, 0) answers EPERM for a stranger's process). A writer is its PID,
 * the moment the kernel started that process (clock ticks since boot, /proc/<pid>/stat field 22) and the
 * boot's id: the same three can only be the same process.
 */
export interface JournalOwner {
  pid: number;
  /** Start time in clock ticks since boot; "" where /proc is unavailable. */
  start: string;
  /** The boot id without dashes; "" where unavailable. */
  boot: string;
}

/** The journals of the stores open in this process (their names): another process cannot tell them apart. */
export const openJournals = new Set<string>();

let self: JournalOwner | undefined;

export function selfOwner(): JournalOwner {
  self ??= { pid: process.pid, start: startTime("self") ?? "", boot: bootId() };
  return self;
}

/** `journal-<pid>-<start>-<boot>-<random>.jsonl`; journals named before owners were recorded: `journal-<pid>-<random>.jsonl`. */
export function journalName(owner: JournalOwner, random: string): string {
  return `journal-${owner.pid}-${owner.start || "0"}-${owner.boot || "0"}-${random}.jsonl`;
}

export function parseJournalName(name: string): JournalOwner | undefined {
  const match = /^journal-(\d+)-(?:(\d+)-([0-9a-f]+)-)?[0-9a-f]+\.jsonl$/.exec(name);
  if (!match) return undefined;
  const known = (text: string | undefined) => (text === undefined || text === "0" ? "" : text);
  return { pid: Number(match[1]), start: known(match[2]), boot: known(match[3]) };
}

/**
 * Whether the writer of the journal `name` may still be running and so owns it. A journal of this
 * process belongs to a store only while that store is open. Another PID must be running, started at the
 * recorded moment, in the same boot; a journal that records neither (an older one, or no /proc) falls
 * back to "a process has that PID".
 */
export function ownerMayBeRunning(name: string, owner: JournalOwner): boolean {
  return openJournals.has(name) || processMayBeRunning(owner);
}

/**
 * Whether the process `owner` names may still be running: not this one, else a running PID started at
 * the recorded moment in the same boot (where those are recorded), else any process with that PID.
 */
export function processMayBeRunning(owner: JournalOwner): boolean {
  const me = selfOwner();
  // The process with this PID is this one: the journal is of a store of it that is gone, or of a
  // predecessor under the same PID.
  if (owner.pid === me.pid) return false;
  if (owner.boot !== "" && me.boot !== "" && owner.boot !== me.boot) return false;
  if (owner.start !== "" && me.start !== "") return startTime(String(owner.pid)) === owner.start;
  return signalReaches(owner.pid);
}

function startTime(pid: string): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    // Fields after the command name, which is in parentheses and may hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[19];
  } catch {
    return undefined;
  }
}

function bootId(): string {
  try {
    return readFileSync("/proc/sys/kernel/random/boot_id", "latin1").trim().replaceAll("-", "");
  } catch {
    return "";
  }
}

function signalReaches(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
