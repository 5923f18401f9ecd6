import { cpSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { importSessions } from "../../src/import/importer.js";
import { readSource } from "../../src/import/read-source.js";
import { defaultRoutingConfig } from "../../src/keys/config.js";
import { cli, useTempDir } from "../cli/helpers.js";
import { FIXTURES, useImportDir } from "./helpers.js";

// The peer's default agent is sessiond's default agent; every other agent keeps its name, is listed when
// sessiond does not have it, and can be mapped to one it has.
const t = useImportDir();
const tempDir = useTempDir();

describe("import: agents map explicitly", () => {
  it("OpenClaw main, CrabTalk crab and ZeroClaw default become sessiond's default agent", async () => {
    const routing = defaultRoutingConfig({ defaultAgent: "boss", agents: ["boss"] });
    const options = { agent: routing.defaultAgent };
    const oc = await importSessions(
      t.store(),
      "openclaw",
      readSource("openclaw", t.fixture("openclaw-2026.9"), options),
      { routing },
    );
    const ct = await importSessions(
      t.store(),
      "crabtalk",
      readSource("crabtalk", t.fixture("crabtalk"), options),
      { routing },
    );
    const zc = t.fixture("zeroclaw");
    const Database = (await import("better-sqlite3")).default;
    const db = new Database(join(zc, "sessions", "sessions.db"));
    db.prepare("UPDATE session_metadata SET agent_alias = 'default'").run();
    db.close();
    const z = await importSessions(t.store(), "zeroclaw", readSource("zeroclaw", zc, options), { routing });
    for (const report of [oc, z]) expect(report.unconfiguredAgents).toEqual([]);
    // The one file sessiond's own JSONL store wrote names its agent, main, which this config lacks.
    expect(ct.unconfiguredAgents).toEqual([{ agent: "main", sessions: 1 }]);
    expect((await t.store().getSession("telegram:12345"))?.agent).toBe("boss");
    // ZeroClaw's `default` no longer puts a `default:` in front of its Telegram keys.
    expect((await t.store().listSessions({})).sessions.filter((s) => s.key.startsWith("default:"))).toEqual(
      [],
    );
    const all = (await t.store().listSessions({ includeArchived: true })).sessions;
    expect(all.filter((s) => s.agent !== "boss").map((s) => s.key)).toEqual(["slack:42"]);
  });

  it("the report and the dry run list the agents sessiond does not have; --agent-map maps them", async () => {
    const src = t.fixture("openclaw-2026.7");
    const dry = await importSessions(t.store(), "openclaw", readSource("openclaw", src), { dryRun: true });
    expect(dry.unconfiguredAgents).toEqual([{ agent: "work", sessions: 1 }]);
    const mapped = await importSessions(
      t.store(),
      "openclaw",
      readSource("openclaw", src, { agentMap: { work: "main" } }),
    );
    expect(mapped.unconfiguredAgents).toEqual([]);
    const session = await t.store().getSession("discord:dm:u777");
    expect(session).toMatchObject({ agent: "main", state: "active" });
  });

  it("CLI: the dry run names the agent; list and show mark its sessions as unconfigured; --agent-map maps", async () => {
    const dir = tempDir();
    const src = join(dir, "openclaw");
    cpSync(join(FIXTURES, "openclaw-2026.7"), src, { recursive: true });
    writeFileSync(join(dir, "sessiond.yaml"), "data_dir: data\nagents:\n  - id: main\n  - id: ops\n");
    const dry = await cli(dir, ["import", "--from", "openclaw", src, "--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.stderr).toContain(
      "agent work: 1 session; add it to agents or map it (--agent-map work=<agent>)\n",
    );
    const real = await cli(dir, ["import", "--from", "openclaw", src]);
    expect(real.code).toBe(0);
    const list = await cli(dir, ["sessions", "list"]);
    expect(list.stdout).toMatch(/work:discord:dm:u777\s+work \(unconfigured\)/);
    expect(list.stdout).toContain("agent work is not configured: its sessions run no turn");
    const shown = await cli(dir, ["sessions", "show", "work:discord:dm:u777"]);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain("agent work is not configured: this session runs no turn");

    const other = tempDir();
    writeFileSync(join(other, "sessiond.yaml"), "data_dir: data\nagents:\n  - id: main\n  - id: ops\n");
    const mapped = await cli(other, [
      "import",
      "--from",
      "openclaw",
      src,
      "--agent-map",
      "work=ops",
      "--json",
    ]);
    expect(mapped.code).toBe(0);
    expect(JSON.parse(mapped.stdout)).toMatchObject({ unconfiguredAgents: [] });
    const listed = await cli(other, ["sessions", "list", "--json"]);
    const keys = (JSON.parse(listed.stdout) as { sessions: Array<{ key: string; agent: string }> }).sessions;
    expect(keys.find((s) => s.agent === "ops")?.key).toBe("ops:discord:dm:u777");
    const bad = await cli(other, ["import", "--from", "openclaw", src, "--agent-map", "work"]);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain("--agent-map wants <peer agent>=<sessiond agent> pairs");
  });
});
