import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cli, seed, useTempDir } from "../cli/helpers.js";
import { startTestGateway, type TestGateway } from "../gateway/http/helpers.js";
import { filesHolding, uniqueWord } from "./byte-scan.js";

const tempDir = useTempDir();

describe("sessiond forget --subject", () => {
  it("erases the person's keys across their links, prints the receipt, and leaves no byte of their text", async () => {
    const dir = tempDir();
    const theirs = uniqueWord("alice");
    await seed(dir, async (engine) => {
      await engine.append("telegram:123", [{ type: "message", role: "user", content: `hi ${theirs}` }]);
      await engine.append("discord:dm:987", [{ type: "message", role: "user", content: `yo ${theirs}` }]);
      await engine.append("telegram:555", [{ type: "message", role: "user", content: "someone else" }]);
    });
    writeFileSync(
      join(dir, "sessiond.yaml"),
      'session:\n  identity_links:\n    alice: ["telegram:123", "discord:dm:987"]\n',
    );
    const run = (...args: string[]) => cli(dir, ["--data-dir", dir, ...args]);
    const refused = await run("forget", "--subject", "discord:dm:987");
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("--yes");
    const json = await run("forget", "--subject", "discord:dm:987", "--yes", "--json");
    expect(json.code).toBe(0);
    const receipt = JSON.parse(json.stdout) as {
      subject: string;
      sessions: number;
      keys: Array<{ key: string }>;
    };
    expect(receipt.subject).toBe("alice");
    expect(receipt.sessions).toBe(2);
    expect(receipt.keys.map((k) => k.key).sort()).toEqual(["discord:dm:987", "telegram:123"]);
    expect(filesHolding(dir, theirs)).toEqual([]);
    expect((await run("sessions", "show", "telegram:555")).code).toBe(0);
    const again = await run("forget", "--subject", "alice", "--yes");
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("forgot alice: 0 sessions");
  });
});

describe("DELETE /api/subjects/{id}", () => {
  let gateway: TestGateway | undefined;
  afterEach(async () => {
    await gateway?.stop();
    gateway = undefined;
  });

  it("answers the receipt and the person's sessions are gone", async () => {
    const g = await startTestGateway({ routing: { identityLinks: { bob: ["telegram:7", "slack:U7"] } } });
    gateway = g;
    await g.engine.append("telegram:7", [{ type: "message", role: "user", content: "hello" }]);
    await g.engine.append("slack:U7", [{ type: "message", role: "user", content: "hello" }]);
    const res = await g.api(`/api/subjects/${encodeURIComponent("slack:U7")}`, { method: "DELETE" });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ subject: "bob", sessions: 2, scrub: "rows deleted" });
    expect(await g.engine.sessions.get("telegram:7")).toBeUndefined();
    const doc = (await (await g.api("/api/openapi.json")).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toContain("/api/subjects/{id}");
  });
});
