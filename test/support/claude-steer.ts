import { createEngine, type Engine } from "../../src/engine.js";
import type { Entry } from "../../src/model/entry.js";
import type { Envelope } from "../../src/model/envelope.js";
import type { TurnResult } from "../../src/turns/turn.js";
import { FAKE_CLAUDE } from "./fake-clis.js";

/** The conversation the Claude Code steer tests talk in. */
export const KEY = "telegram:42";

export function dm(text: string): Envelope {
  return { channel: "telegram", chat: { type: "direct", id: "42" }, sender: { id: "42" }, text };
}

/** An engine whose agent `main` runs the fake `claude` in queue mode `steer`, with no debounce. */
export function steerEngine(tempDir: (prefix: string) => string): Promise<Engine> {
  return createEngine({
    dataDir: tempDir("sessiond-cc-steer-"),
    agentOptions: {
      main: {
        runtime: "claude-code",
        executable: FAKE_CLAUDE,
        cwd: tempDir("sessiond-cwd-"),
        queue: { mode: "steer", debounceMs: 0 },
      },
    },
    titles: { enabled: false },
    lifecycle: { sweepIntervalMs: 0 },
  });
}

/**
 * Starts a turn; at its first event of `type`, `then` runs (another turn arrives) and this resolves with
 * the running turn (wrapped: a promise returned from an async function would be awaited).
 */
export async function atEvent(
  e: Engine,
  text: string,
  type: "tool_call" | "runtime_session",
  then: () => void = () => {},
): Promise<{ turn: Promise<TurnResult> }> {
  let reach!: () => void;
  const reached = new Promise<void>((r) => {
    reach = r;
  });
  let seen = false;
  const turn = e.turn(dm(text), {
    onEvent: (event) => {
      if (event.type !== type || seen) return;
      seen = true;
      then();
      reach();
    },
  });
  turn.catch(() => {});
  await reached;
  return { turn };
}

/** The messages as `role:content`, without the fake's session id and directory. */
export function transcript(history: Entry[]): string[] {
  return history.flatMap((entry) =>
    entry.type === "message" ? [`${entry.role}:${entry.content.replace(/ of \S+ in \S+/g, "")}`] : [],
  );
}
