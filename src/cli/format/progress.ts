/**
 * Progress of a long command on stderr: a bar redrawn in place when stderr is a terminal, otherwise a
 * plain count line every `every` items and at the end (logs and pipes get no control characters).
 */
export function progressReporter(
  write: (text: string) => void,
  isTTY: boolean,
  label: string,
  every = 1000,
): (done: number, total: number) => void {
  let lastLine = 0;
  return (done, total) => {
    if (total === 0) return;
    if (isTTY) {
      const width = 30;
      const filled = Math.round((done / total) * width);
      const bar = `${"#".repeat(filled)}${"-".repeat(width - filled)}`;
      write(`\r${label} [${bar}] ${done}/${total}${done === total ? "\n" : ""}`);
      return;
    }
    if (done === total || done - lastLine >= every) {
      lastLine = done;
      write(`${label}: ${done}/${total}\n`);
    }
  };
}
