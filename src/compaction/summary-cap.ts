/** ZeroClaw truncates an over-long summary rather than discarding it; so does sessiond, at a boundary. */

const formatCount = (n: number) => n.toLocaleString("en-US");

/** The label a cut summary ends with. */
export function cutLabel(maxChars: number): string {
  return `[Summary cut to ${formatCount(maxChars)} characters]`;
}

/** Where text may be cut: after a sentence end (followed by whitespace) or at a line end. */
function lastBoundary(text: string, within: number): number {
  const head = text.slice(0, within + 1);
  let best = -1;
  for (const match of head.matchAll(/[.!?…]["')\]]*(?=\s)|\n/g)) {
    const end = match[0] === "\n" ? match.index : match.index + match[0].length;
    if (end <= within) best = end;
  }
  if (best > 0) return best;
  // One sentence longer than the budget: cut at the last word boundary and mark it.
  const space = head.lastIndexOf(" ", within);
  return space > 0 ? space : within;
}

/**
 * A summary within `maxChars`: unchanged when it fits; otherwise cut at the last sentence or line boundary
 * that leaves room for the label and for the identifiers the cut part lost (listed after it, as many as
 * fit), then labelled. A limit too small for the label gets the summary's first `maxChars` characters.
 */
export function capSummary(summary: string, maxChars: number, identifiers: readonly string[] = []): string {
  if (summary.length <= maxChars) return summary;
  const label = cutLabel(maxChars);
  if (label.length > maxChars) return summary.slice(0, maxChars);
  const lost = (kept: string) => identifiers.filter((id) => !kept.includes(id));
  let room = maxChars - label.length - 1;
  // Reserve what the identifiers lost by a cut need; shrink until the cut and its losses fit together.
  for (let i = 0; i < 8; i++) {
    const end = lastBoundary(summary, Math.max(0, room));
    const body = summary.slice(0, end).trimEnd();
    const missing = lost(body);
    const line = missing.length > 0 ? `\nIdentifiers: ${missing.join(", ")}` : "";
    const marked = end < summary.length && !/[.!?…]["')\]]*$/.test(body) ? "…" : "";
    const text = `${body}${marked}${line}\n${label}`;
    if (text.length <= maxChars) return text;
    room -= text.length - maxChars;
  }
  return `${summary.slice(0, Math.max(0, maxChars - label.length - 2))}…\n${label}`;
}
