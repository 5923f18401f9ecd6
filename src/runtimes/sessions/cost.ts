/**
 * Per-run cost against a baseline (behaviours §5, LoCrew). Claude Code reports the running total of its
 * session; a run's cost is that total minus the total the session had before the run.
 */

/** `priced`: a measured figure (zero included); `unpriced`: the runtime gave none; `not_measured`: the first
 * run seen on a session that already existed (it becomes the baseline); `ambiguous`: the total went to zero
 * or backwards, so the run counts 0 and the next run is measured from the new figure. */
export type RunCostStatus = "priced" | "unpriced" | "not_measured" | "ambiguous";

export interface RunCost {
  status: RunCostStatus;
  /** Set for `priced` and `ambiguous` (0); absent otherwise: an unpriced run is never a verified zero. */
  usd?: number;
}

/** A reported running total at one point. */
export interface CostMark {
  runtimeSessionId: string;
  totalUsd: number;
}

/**
 * What is kept per (agent, conversation) to measure the next report: the last reported total, the run it
 * came from, and the total before that run (so a second report from the same run is measured again from
 * the same start, never twice).
 */
export interface CostBaseline {
  last: CostMark;
  lastRunId: string;
  /** The total before `lastRunId` ran; absent when nothing was known then. */
  before?: CostMark;
}

export interface TotalReport extends CostMark {
  /** The run reporting it (sessiond's input entry id). */
  runId: string;
  /** The run resumed a stored runtime session with this id (false: the runtime started a new one). */
  resumed: boolean;
}

/** Digits kept: totals are dollars with float noise (0.1 + 0.2), figures are rounded to 1e-9 $. */
const SCALE = 1e9;

export function roundUsd(usd: number): number {
  return Math.round(usd * SCALE) / SCALE;
}

/** Measures one reported total; returns the run's cost and the baseline to keep. Pure. */
export function measureTotal(
  baseline: CostBaseline | undefined,
  report: TotalReport,
): { cost: RunCost; baseline: CostBaseline } {
  const start = baseline?.lastRunId === report.runId ? baseline.before : baseline?.last;
  const mark: CostMark = { runtimeSessionId: report.runtimeSessionId, totalUsd: report.totalUsd };
  const next: CostBaseline = { last: mark, lastRunId: report.runId, ...(start ? { before: start } : {}) };
  return { cost: costFrom(start, report), baseline: next };
}

function costFrom(start: CostMark | undefined, report: TotalReport): RunCost {
  if (!Number.isFinite(report.totalUsd) || report.totalUsd < 0) return { status: "ambiguous", usd: 0 };
  if (start === undefined || start.runtimeSessionId !== report.runtimeSessionId) {
    // A session this ledger never saw: a new one costs its whole total; one resumed from before cannot be split.
    return report.resumed ? { status: "not_measured" } : { status: "priced", usd: roundUsd(report.totalUsd) };
  }
  if (report.totalUsd < start.totalUsd) return { status: "ambiguous", usd: 0 };
  return { status: "priced", usd: roundUsd(report.totalUsd - start.totalUsd) };
}

/** A figure the runtime reports for the run itself (no baseline needed). */
export function perRunCost(usd: number | undefined): RunCost {
  if (usd === undefined) return { status: "unpriced" };
  if (!Number.isFinite(usd) || usd < 0) return { status: "ambiguous", usd: 0 };
  return { status: "priced", usd: roundUsd(usd) };
}

/** Sums of the runs of a conversation or an agent. */
export interface CostTotals {
  usd: number;
  pricedRuns: number;
  /** Runs the runtime gave no figure for. */
  unpricedRuns: number;
  ambiguousRuns: number;
  /** First runs seen on a session that already existed: they set the baseline ("cost not measured"). */
  notMeasuredRuns: number;
}

export function emptyTotals(): CostTotals {
  return { usd: 0, pricedRuns: 0, unpricedRuns: 0, ambiguousRuns: 0, notMeasuredRuns: 0 };
}

export function addToTotals(totals: CostTotals, cost: RunCost): CostTotals {
  switch (cost.status) {
    case "priced":
      return { ...totals, usd: roundUsd(totals.usd + (cost.usd ?? 0)), pricedRuns: totals.pricedRuns + 1 };
    case "ambiguous":
      return { ...totals, ambiguousRuns: totals.ambiguousRuns + 1 };
    case "not_measured":
      return { ...totals, notMeasuredRuns: totals.notMeasuredRuns + 1 };
    default:
      return { ...totals, unpricedRuns: totals.unpricedRuns + 1 };
  }
}
