import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import type { SessionInit } from "../src/model/session.js";
import { migrate } from "../src/store/sqlite/schema.js";
import type { Store } from "../src/store/store.js";

/** Progress goes to stderr, so that `--json` leaves stdout to the result. */
export function log(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

/** A fresh directory under `bench-data/` (git-ignored) in the project, on the project's disk. */
export function makeTempDir(prefix: string): string {
  const root = process.env.SESSIOND_BENCH_DIR ?? join(process.cwd(), "bench-data");
  mkdirSync(root, { recursive: true });
  return mkdtempSync(join(root, `${prefix}-`));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

/** `df -T` of a path: the device and filesystem type the benchmark writes to. */
export function diskOf(path: string): string {
  try {
    const lines = execFileSync("df", ["-T", path], { encoding: "utf8" }).trim().split("\n");
    const [device, type] = (lines.at(-1) ?? "").split(/\s+/);
    return `${device ?? "?"} (${type ?? "?"})`;
  } catch {
    return "unknown";
  }
}

/** The size of a SQLite database with its WAL. */
export function databaseBytes(path: string): number {
  let bytes = 0;
  for (const file of [path, `${path}-wal`]) if (existsSync(file)) bytes += statSync(file).size;
  return bytes;
}

/** A small seeded PRNG (mulberry32): the same run draws the same keys and contents. */
export function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  "the session layer keeps every message of every chat in order and durable before it answers so " +
  "an agent can crash restart and pick up the conversation where it left off with its context intact " +
  "please remind me tomorrow about the meeting notes and send the draft to the team channel thanks"
).split(" ");

/** `count` distinct user messages of about `bytes` ASCII bytes each. */
export function messageContents(count: number, bytes = 200, seed = 1): string[] {
  const next = random(seed);
  const contents: string[] = [];
  for (let i = 0; i < count; i++) {
    let text = `#${i}`;
    while (text.length < bytes) text += ` ${WORDS[Math.floor(next() * WORDS.length)]}`;
    contents.push(text.slice(0, bytes));
  }
  return contents;
}

/** The message body every benchmark appends: one user message. */
export function userMessage(content: string): { type: "message"; role: "user"; content: string } {
  return { type: "message", role: "user", content };
}

export const BENCH_INIT: SessionInit = { agent: "main", channel: "telegram", createdBy: "bench" };

/** The session key of the i-th benchmark session. */
export function benchKey(i: number): string {
  return `telegram:${100_000 + i}`;
}

/**
 * A raw better-sqlite3 connection to a file with the store's own schema (so a baseline writes the same
 * table), in WAL mode with the given `synchronous` level.
 */
export function openRaw(path: string, synchronous: "OFF" | "NORMAL" | "FULL"): Database.Database {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma(`synchronous = ${synchronous}`);
  migrate(db);
  return db;
}

export const INSERT_ENTRY_SQL =
  "INSERT INTO entries (sid, seq, id, ts, type, idem_key, data) VALUES (?, ?, ?, ?, ?, ?, ?)";

/** The p-th percentile (0..100) of ascending `sorted`, nearest rank. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

export function mean(values: readonly number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

export function nowMs(): number {
  return performance.now();
}

/**
 * `sessions` writers at once on `store`, each awaiting its own `perSession` appends of `content(s * 31 + i)`;
 * each session is created first, untimed. The milliseconds the timed appends took.
 */
export async function concurrentWriters(
  store: Store,
  sessions: number,
  perSession: number,
  content: (i: number) => string,
): Promise<number> {
  const keys = Array.from({ length: sessions }, (_, s) => benchKey(s));
  await Promise.all(keys.map((key, s) => store.append(key, [userMessage(content(s))], { init: BENCH_INIT })));
  const start = nowMs();
  await Promise.all(
    keys.map(async (key, s) => {
      for (let i = 1; i <= perSession; i++) await store.append(key, [userMessage(content(s * 31 + i))]);
    }),
  );
  return nowMs() - start;
}
