import { readFileSync } from "node:fs";

/** CPU time (ms) a process has used: its main thread's, and all its threads'. Linux only (/proc). */
export interface CpuSample {
  mainMs: number;
  allMs: number;
}

/** Clock ticks per second of /proc's utime and stime (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

function ticks(statPath: string): number {
  // Fields after the command (which may hold spaces) start at the state: utime and stime are 14 and 15.
  const fields = readFileSync(statPath, "utf8").split(") ")[1]?.split(" ") ?? [];
  return Number(fields[11]) + Number(fields[12]);
}

/** The process's CPU so far, or undefined where /proc is not there to read. */
export function cpuOf(pid: number): CpuSample | undefined {
  try {
    const toMs = (t: number) => (t * 1000) / TICKS_PER_SECOND;
    return {
      mainMs: toMs(ticks(`/proc/${pid}/task/${pid}/stat`)),
      allMs: toMs(ticks(`/proc/${pid}/stat`)),
    };
  } catch {
    return undefined;
  }
}

/** CPU used between two samples. */
export function cpuBetween(
  before: CpuSample | undefined,
  after: CpuSample | undefined,
): CpuSample | undefined {
  if (!before || !after) return undefined;
  return { mainMs: after.mainMs - before.mainMs, allMs: after.allMs - before.allMs };
}
