import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { EngineConfig } from "../../src/index.js";
import { cli, parseJson, seed, useTempDir } from "./helpers.js";

const tempDir = useTempDir();
const KEY = "telegram:1";

interface SessionJson {
  id: string;
  key: string;
  state: string;
  forkedFrom?: { key: string; sessionId: string; seq: number };
}
interface Origin {
  key: string;
  session_id: string;
  seq: number;
}

/** The built CLI as a child process on a data dir, for each file store. */
const STORES: ReadonlyArray<[name: string, yaml: string, config: (dir: string) => EngineConfig]> = [
  ["SQLite", "data_dir: .\n", () => ({})],
  [
    "JSONL",
    "data_dir: .\nstore:\n  backend: jsonl\n",
    (dir) => ({ store: { backend: "jsonl", path: join(dir, "sessions") } }),
  ],
];

describe.each(STORES)("sessiond sessions fork, rewind and branches (%s)", (_name, yaml, config) => {
  const setUp = async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "sessiond.yaml"), yaml);
    let parentId = "";
    await seed(
      dir,
      async (engine) => {
        await engine.append(KEY, [
          { type: "message", role: "user", content: "u1" },
          { type: "message", role: "assistant", content: "a1" },
          { type: "message", role: "user", content: "u2" },
          { type: "message", role: "assistant", content: "a2" },
        ]);
        parentId = (await engine.sessions.get(KEY))?.id ?? "";
        // A Codex thread, which cannot fork: a fork leaves it behind and says so.
        await engine.agents.store.save({
          agent: "main",
          key: KEY,
          runtime: "codex",
          id: "9b1c2d3e-0000-4000-8000-000000000002",
          savedAt: 1,
        });
      },
      config(dir),
    );
    const run = (args: string[]) => cli(dir, args);
    const contents = async (key: string) => {
      const shown = await run(["sessions", "show", key, "--json"]);
      expect(shown.code, shown.stderr).toBe(0);
      // The messages: a note says the Codex thread was cleared where it was.
      return parseJson<{ entries: Array<{ type: string; content?: string }> }>(shown.stdout)
        .entries.filter((e) => e.type === "message")
        .map((e) => e.content);
    };
    return { run, contents, parentId };
  };

  it("forks at an entry into a new key that shows its lineage; the parent is unchanged", async () => {
    const { run, contents, parentId } = await setUp();
    const forked = await run(["sessions", "fork", KEY, "--at", "2", "--to-key", `${KEY}/try`, "--json"]);
    expect(forked.code, forked.stderr).toBe(0);
    const answer = parseJson<{
      key: string;
      session: SessionJson;
      forked_from: Origin;
      runtime_sessions: { followed: string[]; cleared: string[] };
    }>(forked.stdout);
    expect(answer.runtime_sessions).toEqual({ followed: [], cleared: ["main"] });
    expect(answer.key).toBe(`${KEY}/try`);
    expect(answer.forked_from).toEqual({ key: KEY, session_id: parentId, seq: 2 });
    expect(answer.session.forkedFrom).toEqual({ key: KEY, sessionId: parentId, seq: 2 });
    expect(await contents(`${KEY}/try`)).toEqual(["u1", "a1"]);
    expect(await contents(KEY)).toEqual(["u1", "a1", "u2", "a2"]);
    const facts = await run(["sessions", "show", `${KEY}/try`]);
    expect(facts.stdout).toMatch(new RegExp(`^history from +${KEY} at #2 \\(session ${parentId}\\)$`, "m"));

    // No --at: the newest entry; the default key, said in words.
    const text = await run(["sessions", "fork", KEY]);
    expect(text.code, text.stderr).toBe(0);
    const match =
      /^forked "telegram:1" at #4 → "(admin-fork-[^"]+)" \(session \w+\); "telegram:1" is unchanged\nruntime sessions: main cleared \(a note in the conversation says why\)\n$/.exec(
        text.stdout,
      );
    expect(match, text.stdout).not.toBeNull();
    expect(await contents(match?.[1] ?? "")).toEqual(["u1", "a1", "u2", "a2"]);

    // A key that has a session already is refused, and nothing changes.
    const taken = await run(["sessions", "fork", KEY, "--to-key", `${KEY}/try`]);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain("KEY_TAKEN");
    expect(await contents(`${KEY}/try`)).toEqual(["u1", "a1"]);
  });

  it("rewinds with a compare-and-swap on the head; the rewound session stays a branch", async () => {
    const { run, contents, parentId } = await setUp();
    const moved = await run(["sessions", "rewind", KEY, "--to", "3", "--expect-head", "3"]);
    expect(moved.code).toBe(1);
    expect(moved.stderr).toContain("SESSION_CHANGED");
    expect(await contents(KEY)).toEqual(["u1", "a1", "u2", "a2"]);

    const rewound = await run(["sessions", "rewind", KEY, "--to", "3", "--expect-head", "4", "--json"]);
    expect(rewound.code, rewound.stderr).toBe(0);
    const answer = parseJson<{ session: SessionJson; archived: SessionJson; forked_from: Origin }>(
      rewound.stdout,
    );
    expect(answer.forked_from).toEqual({ key: KEY, session_id: parentId, seq: 2 });
    expect(answer.archived).toMatchObject({ id: parentId, state: "archived" });
    expect(answer.session).toMatchObject({ key: KEY, state: "active" });
    expect(answer.session.id).not.toBe(parentId);
    expect(await contents(KEY)).toEqual(["u1", "a1"]);

    const fork = await run(["sessions", "fork", KEY, "--to-key", "telegram:other"]);
    expect(fork.code, fork.stderr).toBe(0);
    const branches = await run(["sessions", "branches", KEY, "--json"]);
    expect(branches.code, branches.stderr).toBe(0);
    const listed = parseJson<{
      key: string;
      branches: Array<{ kind: string; key: string; session: SessionJson }>;
    }>(branches.stdout);
    expect(listed.key).toBe(KEY);
    const byKind = (kind: string) =>
      listed.branches.filter((b) => b.kind === kind).map((b) => [b.key, b.session.id]);
    expect(byKind("current")).toEqual([[KEY, answer.session.id]]);
    expect(byKind("rewound")).toEqual([[KEY, parentId]]);
    expect(byKind("fork").map(([key]) => key)).toEqual(["telegram:other"]);

    const table = await run(["sessions", "branches", KEY]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^KIND +KEY +SESSION +GEN +ENTRIES +HISTORY FROM +LAST ACTIVITY$/m);
    expect(table.stdout).toMatch(new RegExp(`^rewound +${KEY} +${parentId} `, "m"));
    expect(table.stdout).toMatch(
      new RegExp(
        // The rewound conversation's note (the Codex thread cleared) is its newest entry, where the fork is taken.
        `^fork +telegram:other +\\w+ +1 +3 +${KEY} at #3 \\(session ${answer.session.id}\\) `,
        "m",
      ),
    );
  });

  it("refuses bad options with exit 2, an unknown key with SESSION_NOT_FOUND", async () => {
    const { run } = await setUp();
    for (const args of [
      ["sessions", "fork", KEY, "--at", "0"],
      ["sessions", "fork", KEY, "--at", "x"],
      ["sessions", "rewind", KEY],
      ["sessions", "rewind", KEY, "--to", "1", "--expect-head", "-1"],
      ["sessions", "fork", KEY, "--to-key", "a\u0001"],
    ]) {
      const result = await run(args);
      expect([args.join(" "), result.code]).toEqual([args.join(" "), 2]);
    }
    for (const command of ["fork", "branches"]) {
      const missing = await run(["sessions", command, "telegram:nobody"]);
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain("SESSION_NOT_FOUND");
    }
  });
});
