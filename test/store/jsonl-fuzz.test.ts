import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";
import { random } from "./jsonl-workload.js";

const base = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();
const RUNS = 300;

describe("JSONL files, fuzzed (seeded, bounded)", () => {
  let source: string;
  let valid: string[];
  let name: string;

  beforeAll(async () => {
    source = mkdtempSync(join(base, "sessiond-jsonl-fuzz-src-"));
    const store = new JsonlStore({ path: source });
    const init = { agent: "main", channel: "t", createdBy: "u1" };
    for (let i = 0; i < 12; i++)
      await store.append(
        "k",
        [
          { type: "message", role: i % 2 ? "assistant" : "user", content: `line ${i} \u00e9 "q" \n` },
          ...(i === 3 ? [{ type: "title" as const, title: "A title" }] : []),
          ...(i === 6 ? [{ type: "note" as const, text: "a note", level: "warn" as const }] : []),
        ],
        { init },
      );
    await store.close();
    name = readdirSync(source).find((n) => n.endsWith(".jsonl"))!;
    valid = readFileSync(join(source, name), "utf8").split("\n").slice(0, -1);
  });
  afterAll(() => rmSync(source, { recursive: true, force: true }));

  it(`${RUNS} files with garbage lines, bit flips and torn tails: no crash, every store opens, every valid line kept`, async () => {
    const next = random(16);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
    const ids = valid.slice(1).map((l) => JSON.parse(l).id as string);
    const garbage = (): string => {
      const seq = pick([2 ** 53, 2 ** 53 + 2, -1, 0, 1.5, "3", null, 1e308, ...ids.map((_, i) => i + 1)]);
      const fields: Record<string, unknown> = {};
      for (const [k, v] of [
        ["seq", seq],
        ["id", pick(["nope", 7, "", undefined])],
        ["ts", pick([1, -5, "now", 1.5, undefined])],
        ["role", pick(["user", "assistant", "robot", 3, undefined])],
        ["content", pick(["x", 5, null, { a: 1 }, [1], undefined])],
        ["compact", pick(["s", 4, undefined, undefined])],
        ["type", pick(["title", "reset", "compaction", "bogus", undefined])],
        ["kept", pick([1, "1", undefined, undefined])],
        ["fromSeq", pick([1, 2 ** 60, undefined])],
      ] as const)
        if (v !== undefined && next() < 0.7) fields[k] = v;
      const json = JSON.stringify(fields);
      switch (Math.floor(next() * 4)) {
        case 0:
          return json;
        case 1: // bytes flipped
          return [...json]
            .map((c) => (next() < 0.1 ? String.fromCharCode(32 + Math.floor(next() * 94)) : c))
            .join("");
        case 2:
          return Buffer.from(
            Array.from({ length: 1 + Math.floor(next() * 40) }, () => 1 + Math.floor(next() * 250)),
          )
            .toString("latin1")
            .replaceAll("\n", " ");
        default:
          return json.slice(0, Math.floor(next() * json.length));
      }
    };
    let problems = 0;
    for (let run = 0; run < RUNS; run++) {
      const lines = [valid[0]!];
      for (const line of valid.slice(1)) {
        while (next() < 0.3) lines.push(garbage());
        lines.push(line);
      }
      let text = `${lines.join("\n")}\n`;
      if (next() < 0.3) text += garbage(); // a torn (or unterminated) last line
      const dir = mkdtempSync(join(base, "sessiond-jsonl-fuzz-"));
      writeFileSync(join(dir, name), text);
      const store = new JsonlStore({ path: dir, onProblem: () => problems++ });
      const [session] = (await store.listSessions()).sessions;
      const kept = new Set((await store.readEntries(session!.id)).map((e) => e.id));
      expect(
        ids.filter((id) => !kept.has(id)),
        `run ${run}`,
      ).toEqual([]);
      await store.append("k", [{ type: "message", role: "user", content: "after" }]);
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
    expect(problems).toBeGreaterThan(RUNS);
  }, 300_000);
});
