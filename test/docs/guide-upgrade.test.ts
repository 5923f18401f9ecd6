import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { SCHEMA_VERSION } from "../../src/store/sqlite/schema.js";
import { cli, parseJson, seed, useTempDir } from "../cli/helpers.js";
import { type ServedGateway, serveGateway } from "../support/serve-child.js";

const tempDir = useTempDir();
const served: ServedGateway[] = [];
afterEach(() => {
  for (const s of served.splice(0)) s.kill();
});
const GUIDE = readFileSync("docs/guides/upgrade-and-backup.md", "utf8");

/** The guide's sections: the SQLite path first, then the one for JSONL. */
const [SQLITE_PART = "", JSONL_PART = ""] = GUIDE.split(/^## JSONL$/m);

/** The `sessiond …` commands of the ```sh blocks of `part`, in the order a reader meets them. */
function guideCommands(part = SQLITE_PART): string[][] {
  const blocks = [...part.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1] as string);
  return blocks
    .flatMap((block) => block.split("\n"))
    .filter((line) => line.startsWith("sessiond "))
    .map((line) => line.split(/\s+/).slice(1));
}

async function keys(dir: string): Promise<string[]> {
  const listed = await cli(dir, ["sessions", "list", "--json"]);
  return parseJson<{ sessions: Array<{ key: string }> }>(listed.stdout)
    .sessions.map((s) => s.key)
    .sort();
}

describe("docs/guides/upgrade-and-backup.md, followed literally", () => {
  it("doctor, backup, doctor, restore: each succeeds and the restore brings back the copy", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "sessiond.yaml"), "data_dir: .\n");
    await seed(dir, async (engine) => {
      await engine.append("web:before", [{ type: "message", role: "user", content: "before the upgrade" }]);
    });
    const commands = guideCommands();
    expect(commands.map((c) => c[0])).toEqual(["doctor", "backup", "doctor", "restore"]);
    for (const args of commands) {
      if (args[0] === "restore") {
        // Between the backup and going back, the upgraded gateway wrote something.
        await seed(dir, async (engine) => {
          await engine.append("web:after", [{ type: "message", role: "user", content: "after the upgrade" }]);
        });
        expect(await keys(dir)).toEqual(["web:after", "web:before"]);
      }
      const result = await cli(dir, args);
      expect({ args, code: result.code, stderr: result.stderr }).toEqual({ args, code: 0, stderr: "" });
    }
    expect(await keys(dir)).toEqual(["web:before"]);
    const aside = readdirSync(dir).filter((name) => /^sessiond\.db\.before-restore-[\d-TZ]+$/.test(name));
    expect(aside).toHaveLength(1);
  });

  it("the refusal it quotes is the one a newer store gets, word for word", async () => {
    const dir = tempDir();
    await seed(dir, async (engine) => {
      await engine.append("web:x", [{ type: "message", role: "user", content: "x" }]);
    });
    const db = new Database(join(dir, "sessiond.db"));
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    const quoted = /```text\n(error \[STORE_SCHEMA_NEWER\]: .*)\n```/.exec(GUIDE)?.[1] ?? "";
    const result = await cli(dir, ["--data-dir", dir, "sessions", "list"]);
    const expected = quoted
      .replace("/srv/sessiond/.sessiond/sessiond.db", join(dir, "sessiond.db"))
      .replace("version 6", `version ${SCHEMA_VERSION + 1}`)
      .replace("knows (5)", `knows (${SCHEMA_VERSION})`);
    expect(result.stderr).toBe(`${expected}\n`);
    expect(existsSync(join(dir, "sessiond.db"))).toBe(true);
  });

  it("JSONL: backup while the gateway runs, restore once it is stopped, as the JSONL section says", async () => {
    const dir = tempDir();
    writeFileSync(join(dir, "sessiond.yaml"), "data_dir: .\nstore: { backend: jsonl, path: sessions }\n");
    const jsonl = { store: { backend: "jsonl" as const, path: join(dir, "sessions") } };
    await seed(
      dir,
      async (engine) => {
        await engine.append("web:before", [{ type: "message", role: "user", content: "before the backup" }]);
      },
      jsonl,
    );
    const commands = guideCommands(JSONL_PART);
    expect(commands).toEqual([
      ["backup", "sessions-backup.tar.gz"],
      ["restore", "sessions-backup.tar.gz"],
    ]);
    // No SESSIOND_TOKEN: the gateway keeps its token in the data dir, where backup finds it.
    const gateway = serveGateway(dir, "");
    served.push(gateway);
    const url = await gateway.listening();
    const backup = await cli(dir, commands[0] as string[]);
    expect({ code: backup.code, stderr: backup.stderr }).toEqual({ code: 0, stderr: "" });
    expect(backup.stdout).toContain(`taken by the gateway at ${url}`);
    // The gateway goes on writing after the copy, then is stopped.
    const token = readFileSync(join(dir, "gateway-token"), "utf8").trim();
    const chat = await fetch(`${url}/api/chat`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ message: "after the backup" }),
    });
    expect(chat.status).toBe(200);
    const exited = new Promise((r) => gateway.child.on("exit", r));
    gateway.child.kill("SIGTERM");
    await exited;
    expect((await keys(dir)).length).toBe(2);

    const restore = await cli(dir, commands[1] as string[]);
    expect({ code: restore.code, stderr: restore.stderr }).toEqual({ code: 0, stderr: "" });
    expect(await keys(dir)).toEqual(["web:before"]);
    const aside = readdirSync(dir).filter((name) => /^sessions\.before-restore-[\d-TZ]+$/.test(name));
    expect(aside).toHaveLength(1);
  });
});
