import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { expect, it } from "vitest";
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";
import { filesHolding } from "../erasure/byte-scan.js";
import { init, msg, sealedStoreContract } from "./sealed-contract.js";

let dir = "";

/** Every file under the directory, recursively. */
function files(at = dir): string[] {
  return readdirSync(at).flatMap((name) => {
    const path = join(at, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}
const sessionFiles = () => readdirSync(dir).filter((f) => f.endsWith(".jsonl"));
const lines = (file: string) =>
  readFileSync(join(dir, file), "utf8")
    .split("\n")
    .filter((l) => l !== "");
/** The file whose metadata line names the session, and that line's wrapped data key. */
function fileOf(sessionId: string): { file: string; dataKey: string | undefined } | undefined {
  for (const file of sessionFiles()) {
    const meta = JSON.parse(lines(file)[0]!) as { session_id?: string; data_key?: string };
    if (meta.session_id === sessionId) return { file, dataKey: meta.data_key };
  }
  return undefined;
}
const lineAt = (file: string, seq: number) =>
  lines(file).findIndex(
    (l) => (JSON.parse(l) as { seq?: number; kept?: number }).seq === seq && !l.includes('"kept"'),
  );

sealedStoreContract("JSONL", {
  fresh: () => {
    dir = mkdtempSync(join(tmpdir(), "sessiond-sealed-jsonl-"));
  },
  open: async (encryption) => new JsonlStore({ path: dir, ...(encryption ? { encryption } : {}) }),
  holding: async (word) => [
    ...filesHolding(dir, word),
    // A file's name is bytes of the directory too.
    ...files().filter((f) => relative(dir, f).includes(word.slice(0, 8))),
  ],
  stored: async (sessionId, seq) => {
    const found = fileOf(sessionId);
    if (!found) return { body: undefined, dataKey: undefined };
    const at = lineAt(found.file, seq);
    return { body: at < 0 ? undefined : lines(found.file)[at], dataKey: found.dataKey };
  },
  damage: async (sessionId, seq) => {
    const { file } = fileOf(sessionId)!;
    const all = lines(file);
    const at = lineAt(file, seq);
    const line = JSON.parse(all[at]!) as { sealed: string };
    line.sealed = line.sealed.slice(0, 30) + (line.sealed[30] === "A" ? "B" : "A") + line.sealed.slice(31);
    all[at] = JSON.stringify(line);
    writeFileSync(join(dir, file), `${all.join("\n")}\n`);
  },
  dataKeys: async () =>
    sessionFiles().flatMap((file) => {
      const meta = JSON.parse(lines(file)[0]!) as { session_id: string; data_key?: string };
      return meta.data_key ? [{ id: meta.session_id, dataKey: meta.data_key }] : [];
    }),
  // Every file but the directory's index, a cache that any open consumes (the next reads the files).
  fingerprint: async () => {
    const hash = createHash("sha256");
    for (const path of files().sort())
      if (!path.endsWith("index.json")) hash.update(relative(dir, path)).update(readFileSync(path));
    return hash.digest("hex");
  },
  sealsInbox: true,
  cleanup: () => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  },
});

it("JSONL: an encrypted directory's file names carry no title, and its search is off", async () => {
  dir = mkdtempSync(join(tmpdir(), "sessiond-sealed-jsonl-"));
  const store = new JsonlStore({ path: dir, encryption: { key: Buffer.alloc(32, 7) } });
  try {
    await store.append("k", [msg("hello"), { type: "title", title: "Holiday plans" }], { init });
    await store.flush();
    expect(sessionFiles().join(" ")).not.toMatch(/holiday/i);
    expect(store.capabilities.search).toBeUndefined();
    await expect(store.search({ text: "hello" })).rejects.toMatchObject({ code: "SEARCH_UNAVAILABLE" });
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
