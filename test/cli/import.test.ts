import { cpSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { WORKSPACE_ID } from "../import/generators/nanobot.js";
import { FIXTURES } from "../import/helpers.js";
import { cli, useTempDir } from "./helpers.js";

const tempDir = useTempDir();

describe("sessiond import", () => {
  it("reports a dry run, imports once, adds nothing the second time; a summary per system; problems with their place", async () => {
    const dir = tempDir();
    const src = join(dir, "nanobot");
    cpSync(join(FIXTURES, "nanobot"), src, { recursive: true });
    const args = ["--data-dir", join(dir, "data"), "import", "--from", "nanobot", src];
    const dry = await cli(dir, [...args, "--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain("would import 2 sessions (12 entries)");
    expect(dry.stderr).toContain(
      `warning: ${join(src, "sessions", WORKSPACE_ID, "c2xhY2s6Qzk.jsonl")}:3: not JSON`,
    );

    const first = await cli(dir, args);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain("imported 2 sessions (12 entries); 0 already there; 2 problems");
    expect(first.stdout).toContain(
      "nanobot: 2 sessions, 12 entries, 8 messages, 1 tool call, 1 tool result, 1 summary, 1 title, 2 problems",
    );
    // stderr is not a terminal here: plain counts, no bar.
    expect(first.stderr).toContain("importing: 2/2\n");
    expect(first.stderr).not.toContain("\r");

    const second = await cli(dir, args);
    expect(second.stdout).toContain("imported 0 sessions (0 entries); 2 already there");
    const shown = await cli(dir, [
      "--data-dir",
      join(dir, "data"),
      "sessions",
      "show",
      "telegram:12345",
      "--json",
    ]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain("Lisbon is 21C.");
  });

  it("routes with the config's agents and scope; imports into a JSONL store; refuses an unknown system", async () => {
    const dir = tempDir();
    const src = join(dir, "zeroclaw");
    cpSync(join(FIXTURES, "zeroclaw"), src, { recursive: true });
    writeFileSync(
      join(dir, "sessiond.yaml"),
      "data_dir: data\nstore:\n  backend: jsonl\nagents:\n  - id: main\n  - id: ops\n",
    );
    const result = await cli(dir, ["import", "--from", "zeroclaw", src, "--json"]);
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as {
      imported: { sessions: number };
      problems: unknown[];
      summary: { toolCalls: number };
    };
    expect(report.imported.sessions).toBe(4);
    expect(report.problems).toHaveLength(3);
    expect(report.summary.toolCalls).toBe(2);
    expect(readdirSync(join(dir, "data", "sessions")).filter((n) => n.endsWith(".jsonl"))).toHaveLength(4);
    // Two agents configured: the chat keys carry the agent, as the router gives them.
    const shown = await cli(dir, ["sessions", "show", "main:telegram:12345", "--json"]);
    expect(shown.code).toBe(0);
    const bad = await cli(dir, ["import", "--from", "goclaw", src]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("Allowed choices are crabtalk, zeroclaw, openclaw, nanobot, picoclaw");
  });
});
