import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";

function load(yaml: string) {
  const dir = mkdtempSync(join(tmpdir(), "sessiond-queue-config-"));
  try {
    writeFileSync(join(dir, "sessiond.yaml"), yaml);
    return loadConfig({ file: join(dir, "sessiond.yaml"), env: {} }).config;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe("queue settings in sessiond.yaml", () => {
  it("reads an agent's queue mode, debounce, cap and drop policy", () => {
    const config = load(
      "agents:\n  - id: main\n    queue: { mode: collect, debounce_ms: 250, cap: 5, drop: summarize }\n",
    );
    expect(config.agentOptions?.main?.queue).toEqual({
      mode: "collect",
      debounceMs: 250,
      cap: 5,
      drop: "summarize",
    });
  });

  it("refuses a mode it does not know, naming the field", () => {
    expect(() => load("agents:\n  - id: main\n    queue: { mode: sideways }\n")).toThrow(/queue/);
  });
});
