import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { afterEach, beforeEach } from "vitest";

/** The `claude` binary the SDK ships for this platform (an optional dependency: absent elsewhere). */
export function shippedCli(): string | undefined {
  try {
    const manifest = createRequire(import.meta.url).resolve(
      `@anthropic-ai/claude-agent-sdk-${process.platform}-${process.arch}/package.json`,
    );
    const cli = join(dirname(manifest), "claude");
    return existsSync(cli) ? cli : undefined;
  } catch {
    return undefined;
  }
}

const OFFLINE_ENV = [
  "HOME",
  "ANTHROPIC_BASE_URL",
  "ANTHROPIC_API_KEY",
  "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
];

/**
 * Runs the CLI offline against a local Anthropic API: `offline(baseUrl, home)` points the environment the
 * SDK passes to the CLI there, and each test's changes are undone after it.
 */
export function useOfflineClaude(): (baseUrl: string, home: string) => void {
  const saved: Record<string, string | undefined> = {};
  beforeEach(() => {
    for (const name of OFFLINE_ENV) saved[name] = process.env[name];
  });
  afterEach(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });
  return (baseUrl, home) => {
    Object.assign(process.env, {
      HOME: home,
      ANTHROPIC_BASE_URL: baseUrl,
      ANTHROPIC_API_KEY: "sk-ant-offline-test",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    });
  };
}
