/** What every benchmark gets: where to write, how big to run, where progress goes. */
export interface BenchContext {
  /** A scratch directory on the project's disk, removed after the run. */
  dir: string;
  quick: boolean;
  log: (message: string) => void;
}

/** One target of a figure; informational, it never fails the run. */
export interface Check {
  /** e.g. `>= 30,000/s` or `>= 0.70x baseline`. */
  target: string;
  pass: boolean;
}

/** One line of the table: a figure, the baseline measured beside it in the same run, and its targets. */
export interface Row {
  figure: string;
  value: string;
  baseline: string;
  ratio: string;
  checks: Check[];
}

/**
 * A benchmark: `run` measures and returns plain numbers (they go into `--json` as they are); `rows`
 * turns them into table lines with their targets. A new benchmark is one more file exporting one.
 */
export interface Bench<R> {
  name: string;
  run(ctx: BenchContext): Promise<R>;
  rows(result: R): Row[];
}

export function atLeast(value: number, min: number, label: string): Check {
  return { target: `>= ${label}`, pass: value >= min };
}

export function below(value: number, max: number, label: string): Check {
  return { target: `< ${label}`, pass: value < max };
}

export function atMost(value: number, max: number, label: string): Check {
  return { target: `<= ${label}`, pass: value <= max };
}

export function int(n: number): string {
  return Number.isFinite(n) ? Math.round(n).toLocaleString("en-US") : "-";
}

export function fixed(n: number, digits: number): string {
  return Number.isFinite(n) ? n.toFixed(digits) : "-";
}

export function ratioText(n: number): string {
  return Number.isFinite(n) ? `${n.toFixed(2)}x` : "";
}

export function verdict(checks: readonly Check[]): string {
  if (checks.length === 0) return "";
  return checks.every((c) => c.pass) ? "PASS" : "MISS";
}

/** A plain-text table with the targets and PASS/MISS beside each figure. */
export function renderTable(sections: ReadonlyArray<{ name: string; rows: Row[] }>): string {
  const header = ["figure", "sessiond", "baseline", "ratio", "target", ""];
  const lines: string[][] = [];
  const titles = new Map<number, string>();
  for (const section of sections) {
    titles.set(lines.length, section.name);
    for (const row of section.rows) {
      lines.push([
        row.figure,
        row.value,
        row.baseline,
        row.ratio,
        row.checks.map((c) => c.target).join(" and "),
        verdict(row.checks),
      ]);
    }
  }
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? "").length)));
  const right = new Set([1, 2, 3]);
  const format = (cells: string[]) =>
    cells
      .map((cell, i) => (right.has(i) ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  const out = [format(header), widths.map((w) => "-".repeat(w)).join("  ")];
  lines.forEach((line, i) => {
    const title = titles.get(i);
    if (title !== undefined) out.push(`[${title}]`);
    out.push(format(line));
  });
  return out.join("\n");
}
