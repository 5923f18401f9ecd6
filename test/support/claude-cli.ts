import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

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
