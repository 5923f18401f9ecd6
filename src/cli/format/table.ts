export interface Column {
  header: string;
  /** Longer cells are cut to this many characters, ending in `…`. */
  max?: number;
  align?: "left" | "right";
}

/** Characters as a terminal counts them, near enough: code points, not UTF-16 units. */
function width(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** One line, no control characters: a title or key must not break the table's rows. */
export function oneLine(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, " ");
}

/**
 * Stored text may come from anyone on a channel; escape sequences in it must not reach the terminal.
 * Keeps newlines and tabs, drops `\r` before a newline, shows other control characters as U+FFFD.
 */
export function printable(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is replaced
  return text.replace(/\r\n/g, "\n").replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, "\ufffd");
}

export function truncate(text: string, max: number): string {
  if (width(text) <= max) return text;
  return `${Array.from(text)
    .slice(0, Math.max(0, max - 1))
    .join("")}…`;
}

/** An aligned plain-text table, two spaces between columns, no trailing spaces. */
export function renderTable(columns: readonly Column[], rows: readonly (readonly string[])[]): string {
  const cells = rows.map((row) =>
    columns.map((column, i) => {
      const text = oneLine(row[i] ?? "");
      return column.max === undefined ? text : truncate(text, column.max);
    }),
  );
  const widths = columns.map((column, i) =>
    Math.max(width(column.header), ...cells.map((row) => width(row[i] ?? ""))),
  );
  const line = (row: readonly string[]) =>
    row
      .map((cell, i) => {
        const pad = " ".repeat((widths[i] ?? 0) - width(cell));
        return columns[i]?.align === "right" ? pad + cell : cell + pad;
      })
      .join("  ")
      .trimEnd();
  return `${[line(columns.map((c) => c.header)), ...cells.map(line)].join("\n")}\n`;
}
