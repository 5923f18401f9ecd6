import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import pg from "pg";

/** A text no code or fixture holds: lowercase letters and digits, one word for every tokenizer. */
export function uniqueMarker(): string {
  return `incogmark${randomBytes(8).toString("hex")}`;
}

/** Every file under `dir` (all depths, dot files, SQLite -wal and -shm, logs), whose bytes hold `marker`. */
export function filesHolding(dir: string, marker: string): string[] {
  const needles = [Buffer.from(marker, "utf8"), Buffer.from(marker, "utf16le")];
  const found: string[] = [];
  const walk = (path: string) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile()) {
        const bytes = readFileSync(full);
        if (needles.some((needle) => bytes.includes(needle))) found.push(full);
      }
    }
  };
  walk(dir);
  return found;
}

/** How many files `filesHolding` read: proves the scan saw the store's files. */
export function fileCount(dir: string): number {
  let count = 0;
  const walk = (path: string) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      if (entry.isDirectory()) walk(join(path, entry.name));
      else if (entry.isFile()) count++;
    }
  };
  walk(dir);
  return count;
}

/** Every table of the database's public schema whose rows, as text, hold `marker`. */
export async function tablesHolding(url: string, marker: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const tables = await client.query<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public'",
    );
    const found: string[] = [];
    for (const { name } of tables.rows) {
      const rows = await client.query<{ n: string }>(
        `SELECT count(*) AS n FROM ${pg.escapeIdentifier(name)} t WHERE t::text LIKE $1`,
        [`%${marker}%`],
      );
      if (Number(rows.rows[0]?.n) > 0) found.push(name);
    }
    return found;
  } finally {
    await client.end();
  }
}
