/**
 * The oldest Node line sessiond runs on. Node 20 reached its end of life in April 2026, and better-sqlite3 13
 * (the SQLite driver, an N-API build) crashes there at its first statement: refused up front, in one line.
 */
export const LOWEST_NODE_MAJOR = 22;

/** The line to print when `version` (process.versions.node) is too old to run sessiond, else undefined. */
export function nodeTooOld(version: string, execPath: string): string | undefined {
  const major = Number(version.split(".")[0]);
  if (major >= LOWEST_NODE_MAJOR) return undefined;
  return (
    `sessiond needs Node 22 or 24, and this is Node ${version} (${execPath}); ` +
    "without root: npm install --prefix ~/node22 node@22, then put ~/node22/node_modules/node/bin first on PATH"
  );
}
