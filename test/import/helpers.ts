import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterEach, beforeEach, expect } from "vitest";
import { type ImportOptions, type ImportReport, importSessions } from "../../src/import/importer.js";
import { readSource } from "../../src/import/read-source.js";
import type { ImportSource } from "../../src/import/types.js";
import type { Entry } from "../../src/model/entry.js";
import { SqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";

export const FIXTURES = join(import.meta.dirname, "fixtures");

/** Each entry in one comparable line: `user:text`, `assistant:text [calls]`, `tool(id):text`, `compaction`, `title:…`. */
export function shape(entries: readonly Entry[]): string[] {
  return entries.map((e) => {
    switch (e.type) {
      case "message": {
        const calls = e.toolCalls?.length
          ? ` [${e.toolCalls.map((c) => `${c.name}#${c.id}`).join(",")}]`
          : "";
        const role = e.role === "tool" ? `tool(${e.toolCallId ?? ""})` : e.role;
        return `${role}:${e.content}${calls}`;
      }
      case "compaction":
        return `compaction:${e.summary}`;
      case "title":
        return `title:${e.title}`;
      case "note":
        return `note(${e.code ?? ""}):${e.text}`;
      default:
        return e.type;
    }
  });
}

/** `shape` without the sentence the generators pad lines with (so that OpenClaw compresses them). */
export const unpadded = (entries: readonly Entry[]): string[] =>
  shape(
    entries.map((e) =>
      e.type === "message" ? { ...e, content: e.content.replace(/ Lisbon sits.*$/s, "") } : e,
    ),
  );

/** A temp folder with a copy of one fixture (the tests never touch the committed files) and a SQLite store. */
export function useImportDir(): { dir: () => string; store: () => Store; fixture: (name: string) => string } {
  let dir = "";
  let store: Store | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-import-"));
    store = new SqliteStore({ path: join(dir, "sessiond.db") });
  });
  afterEach(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    dir: () => dir,
    store: () => store!,
    fixture: (name: string) => {
      const to = join(dir, "src", name);
      cpSync(join(FIXTURES, name), to, { recursive: true });
      return to;
    },
  };
}

/** Imports twice: the second run must add nothing. Returns the first report. */
export async function importTwice(
  store: Store,
  source: ImportSource,
  path: string,
  options: ImportOptions & { agent?: string } = {},
): Promise<ImportReport> {
  const read = () => readSource(source, path, options.agent ? { agent: options.agent } : {});
  const first = await importSessions(store, source, read(), options);
  const second = await importSessions(store, source, read(), options);
  expect(second.imported).toEqual({ sessions: 0, entries: 0 });
  expect(second.alreadyThere).toBe(first.imported.sessions);
  return first;
}

/** The committed `.gz` files of a fixture copy (OpenClaw 2026.9 databases) unpacked in place. */
export function gunzipAll(dir: string): void {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) gunzipAll(path);
    else if (name.endsWith(".gz")) {
      writeFileSync(path.slice(0, -3), gunzipSync(readFileSync(path)));
      rmSync(path);
    }
  }
}
