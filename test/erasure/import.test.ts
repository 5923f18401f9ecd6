import { cpSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli, useTempDir } from "../cli/helpers.js";
import { FIXTURES } from "../import/helpers.js";

const tempDir = useTempDir();

describe("sessiond import after forget --subject", () => {
  it("leaves the erased person's sessions out and reports them; the others come in", async () => {
    const dir = tempDir();
    const src = join(dir, "nanobot");
    cpSync(join(FIXTURES, "nanobot"), src, { recursive: true });
    const data = ["--data-dir", join(dir, "data")];
    const importArgs = [...data, "import", "--from", "nanobot", src];
    expect((await cli(dir, importArgs)).stdout).toContain("imported 2 sessions");
    const forgot = await cli(dir, [...data, "forget", "--subject", "telegram:12345", "--yes", "--json"]);
    expect(forgot.code).toBe(0);
    expect(JSON.parse(forgot.stdout)).toMatchObject({ sessions: 1 });

    const again = await cli(dir, importArgs);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("imported 0 sessions (0 entries); 1 already there");
    expect(again.stderr).toContain("its person was erased (sessiond forget --subject)");
    expect((await cli(dir, [...data, "sessions", "show", "telegram:12345"])).code).toBe(1);
  });
});
