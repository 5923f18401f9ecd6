import { describe, expect, it } from "vitest";
import { createEngine } from "../../src/index.js";
import { cli, parseJson, seed, useTempDir } from "./helpers.js";

const tempDir = useTempDir();

async function seeded(): Promise<string> {
  const dir = tempDir();
  await seed(dir, async (engine) => {
    await engine.append("telegram:1", [
      { type: "message", role: "user", content: "shared question" },
      { type: "message", role: "assistant", content: "shared answer" },
    ]);
  });
  return dir;
}

/** What the link shows, read through the library on the same data directory. */
async function viewOf(dir: string, id: string) {
  const engine = await createEngine({ dataDir: dir });
  try {
    return await engine.shares.view(id);
  } finally {
    await engine.close();
  }
}

describe("sessiond sessions share / shares, sessiond shares revoke", () => {
  it("prints the link's URL, lists the key's links, and revokes by id or URL", async () => {
    const dir = await seeded();
    const made = await cli(dir, ["--data-dir", dir, "sessions", "share", "telegram:1"]);
    expect(made).toMatchObject({ code: 0, stderr: "" });
    const [, id] = /^http:\/\/127\.0\.0\.1:7420\/share\/([A-Za-z0-9_-]{24})\n$/.exec(made.stdout) ?? [];
    expect(id).toBeDefined();
    expect((await viewOf(dir, id!))?.messages.map((m) => m.content)).toEqual([
      "shared question",
      "shared answer",
    ]);

    const other = await cli(dir, [
      "--data-dir",
      dir,
      "sessions",
      "share",
      "telegram:1",
      "--base-url",
      "https://chat.example.com/",
    ]);
    expect(other.stdout).toMatch(/^https:\/\/chat\.example\.com\/share\/[A-Za-z0-9_-]{24}\n$/);

    const listed = await cli(dir, ["--data-dir", dir, "sessions", "shares", "telegram:1", "--json"]);
    const links = parseJson<Array<{ id: string; headSeq: number; url: string }>>(listed.stdout);
    expect(links.map((l) => l.id)).toContain(id);
    expect(links).toHaveLength(2);
    expect(links.every((l) => l.headSeq === 2)).toBe(true);
    const text = await cli(dir, ["--data-dir", dir, "sessions", "shares", "telegram:1"]);
    expect(text.stdout.split("\n").filter(Boolean)).toHaveLength(2);
    expect(text.stdout).toContain(`${id}  up to seq 2  `);

    const revoked = await cli(dir, [
      "--data-dir",
      dir,
      "shares",
      "revoke",
      `http://127.0.0.1:7420/share/${id}`,
    ]);
    expect(revoked).toMatchObject({ code: 0, stdout: `revoked ${id}\n` });
    expect(await viewOf(dir, id!)).toBeUndefined();
    const again = await cli(dir, ["--data-dir", dir, "shares", "revoke", id!]);
    expect(again).toMatchObject({ code: 1, stdout: "", stderr: "error: no such share link\n" });
  });

  it("fails with SESSION_NOT_FOUND for a key that has no session, and makes no link", async () => {
    const dir = await seeded();
    const result = await cli(dir, ["--data-dir", dir, "sessions", "share", "telegram:404"]);
    expect(result).toMatchObject({
      code: 1,
      stdout: "",
      stderr: 'error [SESSION_NOT_FOUND]: no session for key "telegram:404"\n',
    });
    const listed = await cli(dir, ["--data-dir", dir, "sessions", "shares", "telegram:404", "--json"]);
    expect(parseJson(listed.stdout)).toEqual([]);
  });
});
