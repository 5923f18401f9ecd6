import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { writeNanobot, writeZeroclaw } from "../import/fixtures.js";
import { cli, useTempDir } from "./helpers.js";

const tempDir = useTempDir();

describe("sessiond import", () => {
  it("reports a dry run, imports once, adds nothing the second time; problems name their file and line", async () => {
    const dir = tempDir();
    const src = join(dir, "nanobot");
    writeNanobot(src);
    const args = ["--data-dir", join(dir, "data"), "import", "--from", "nanobot", src];
    const dry = await cli(dir, [...args, "--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain("would import 1 session (3 entries)");
    expect(dry.stderr).toContain(`warning: ${join(src, "telegram_123.jsonl")}:6: unknown role 7`);

    const first = await cli(dir, args);
    expect(first.code).toBe(0);
    expect(first.stdout).toContain(
      "imported 1 session (3 entries); 0 already there; 1 problem; 1 tool result left out",
    );
    // stderr is not a terminal here: plain counts, no bar.
    expect(first.stderr).toContain("importing: 1/1\n");
    expect(first.stderr).not.toContain("\r");

    const second = await cli(dir, args);
    expect(second.stdout).toContain("imported 0 sessions (0 entries); 1 already there");
    const shown = await cli(dir, [
      "--data-dir",
      join(dir, "data"),
      "sessions",
      "show",
      "telegram:123",
      "--json",
    ]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain("It is -3C in Oslo.");
  });

  it("imports into a JSONL store from config, and refuses an unknown system", async () => {
    const dir = tempDir();
    const src = join(dir, "zeroclaw");
    writeZeroclaw(src);
    writeFileSync(join(dir, "sessiond.yaml"), "data_dir: data\nstore:\n  backend: jsonl\n");
    const result = await cli(dir, ["import", "--from", "zeroclaw", src, "--json"]);
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as { imported: { sessions: number }; problems: unknown[] };
    expect(report.imported.sessions).toBe(3);
    expect(report.problems).toHaveLength(1);
    expect(readdirSync(join(dir, "data", "sessions")).filter((n) => n.endsWith(".jsonl"))).toHaveLength(3);
    const bad = await cli(dir, ["import", "--from", "goclaw", src]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("Allowed choices are crabtalk, zeroclaw, openclaw, nanobot, picoclaw");
  });
});
