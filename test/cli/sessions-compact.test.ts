import { describe, expect, it } from "vitest";
import { cli, seed, useTempDir } from "./helpers.js";

const tempDir = useTempDir();

describe("sessiond sessions compact", () => {
  it("summarises the older part offline, records a compaction entry and keeps the archive", async () => {
    const dir = tempDir();
    await seed(dir, async (engine) => {
      for (let i = 1; i <= 4; i++) {
        await engine.append("telegram:1", [
          {
            type: "message",
            role: "user",
            content: `I prefer window seats. Booking ref QX-${i}${i}${i}${i}.`,
          },
          { type: "message", role: "assistant", content: `Noted booking ${i}.` },
        ]);
      }
    });
    const result = await cli(dir, ["--data-dir", dir, "sessions", "compact", "telegram:1", "--json"]);
    expect(result.code).toBe(0);
    const entry = JSON.parse(result.stdout) as {
      type: string;
      summarizer: string;
      summary: string;
      firstKeptSeq: number;
    };
    expect(entry).toMatchObject({ type: "compaction", summarizer: "offline" });
    expect(entry.summary).toContain("QX-1111");
    const shown = await cli(dir, ["--data-dir", dir, "sessions", "show", "telegram:1", "--json"]);
    const body = JSON.parse(shown.stdout) as { entries: Array<{ type: string }> };
    expect(body.entries.filter((e) => e.type === "message")).toHaveLength(8);
  });

  it("exits 1 with NOTHING_TO_COMPACT when there is nothing older to summarise", async () => {
    const dir = tempDir();
    await seed(dir, async (engine) => {
      await engine.append("telegram:2", [{ type: "message", role: "user", content: "just one" }]);
    });
    const result = await cli(dir, ["--data-dir", dir, "sessions", "compact", "telegram:2"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("NOTHING_TO_COMPACT");
  });
});
