import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readTar, type TarMember } from "../../src/fs/tar-read.js";
import { padding, TAR_END, tarHeader } from "../../src/fs/tar-write.js";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const temp = () => {
  const dir = mkdtempSync(join(tmpdir(), "sessiond-tar-"));
  dirs.push(dir);
  return dir;
};

/** A name ustar cannot hold: 150 characters, some of them two bytes in UTF-8. */
const LONG = `.sessiond/meta/${"ü".repeat(60)}-${"a".repeat(70)}.json`;

async function members(bytes: Buffer, chunk: number): Promise<Array<TarMember & { body: string }>> {
  const out: Array<TarMember & { body: string }> = [];
  async function* chunks() {
    for (let at = 0; at < bytes.length; at += chunk) yield bytes.subarray(at, at + chunk);
  }
  const { ended } = await readTar(chunks(), (m) => {
    const parts: Buffer[] = [];
    return {
      write: (b) => parts.push(Buffer.from(b)),
      end: () => out.push({ ...m, body: Buffer.concat(parts).toString("utf8") }),
    };
  });
  expect(ended).toBe(true);
  return out;
}

describe("tar (src/fs/tar-*.ts)", () => {
  it("writes what GNU tar lists and extracts, long and non-ASCII names included", () => {
    const dir = temp();
    const body = Buffer.from("hello\n");
    const file = join(dir, "a.tar");
    writeFileSync(
      file,
      Buffer.concat([
        tarHeader({ name: LONG, size: body.length, mode: 0o640, mtimeMs: 0 }),
        body,
        padding(body.length),
        TAR_END,
      ]),
    );
    expect(execFileSync("tar", ["-tf", file], { encoding: "utf8" })).toBe(`${LONG}\n`);
    mkdirSync(join(dir, "x"));
    execFileSync("tar", ["-xf", file, "-C", join(dir, "x")]);
    expect(readFileSync(join(dir, "x", LONG), "utf8")).toBe("hello\n");
  });

  it("reads what GNU tar writes (pax), whatever the chunks the bytes come in", async () => {
    const dir = temp();
    mkdirSync(join(dir, "src", ".sessiond", "meta"), { recursive: true });
    writeFileSync(join(dir, "src", LONG), "long\n");
    writeFileSync(join(dir, "src", "s.jsonl"), "x".repeat(1500));
    const file = join(dir, "gnu.tar");
    execFileSync("tar", ["--format=pax", "-cf", file, "-C", join(dir, "src"), "s.jsonl", LONG]);
    for (const chunk of [1, 511, 512, 4096]) {
      const read = await members(readFileSync(file), chunk);
      expect(read.map((m) => [m.name, m.type, m.body.length])).toEqual([
        ["s.jsonl", "0", 1500],
        [LONG, "0", 5],
      ]);
    }
  });

  it("refuses bytes that are not a tar with a checksum error", async () => {
    const junk = Buffer.alloc(1024, 0x41);
    await expect(members(junk, 100)).rejects.toThrow(/checksum does not match/);
  });
});
