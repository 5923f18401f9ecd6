import type { SDKResultMessage, SDKUserMessage } from "@anthropic-ai/claude-agent-sdk";
import { describe, expect, it } from "vitest";
import type { RuntimeSteering } from "../../src/model/runtime.js";
import { SteeredPrompt } from "../../src/runtimes/claude-code-input.js";

// The orderings here (a result while a take is in flight, or between two steers of one take) depend on
// how stdin and stdout interleave, which a CLI cannot be made to hit on cue: the input is driven by hand.

function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** A turn's steers as a test scripts them: `gate` holds `take` (storing them) until it resolves. */
class ScriptedSteering implements RuntimeSteering {
  readonly waiting: string[] = [];
  takes = 0;
  gate: Promise<void> | undefined;
  readonly taking = deferred();
  /** The signal of each `wait`. */
  readonly signals: AbortSignal[] = [];
  private waits = () => {};
  private wake = () => {};

  push(text: string): void {
    this.waiting.push(text);
    this.wake();
  }
  pending(): boolean {
    return this.waiting.length > 0;
  }
  async take(): Promise<string[]> {
    this.takes += 1;
    this.taking.resolve();
    // Like the turn queue's: what waits leaves the queue at once, then is stored.
    const taken = this.waiting.splice(0);
    await this.gate;
    return taken;
  }
  /** The signal of the `n`-th `wait`, once it was called. */
  async waited(n: number): Promise<AbortSignal> {
    while (this.signals.length < n) await new Promise<void>((r) => (this.waits = r));
    return this.signals[n - 1] as AbortSignal;
  }
  wait(signal: AbortSignal): Promise<boolean> {
    this.signals.push(signal);
    this.waits();
    if (this.pending()) return Promise.resolve(true);
    if (signal.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      this.wake = () => resolve(true);
      signal.addEventListener("abort", () => resolve(false), { once: true });
    });
  }
}

function result(uuids?: string[]): SDKResultMessage {
  return {
    type: "result",
    subtype: "success",
    is_error: false,
    result: "",
    ...(uuids ? { user_message_uuid: uuids.at(-1), user_message_uuids: uuids } : {}),
  } as SDKResultMessage;
}

async function written(input: AsyncGenerator<SDKUserMessage>): Promise<SDKUserMessage> {
  const next = await input.next();
  if (next.done) throw new Error("the input ended");
  return next.value;
}

const textOf = (message: SDKUserMessage): unknown =>
  (message.message.content as Array<{ text: string }>)[0]?.text;

describe("SteeredPrompt: the streaming input of a Claude Code run that takes steers", () => {
  it("a result without uuids while a take is in flight: the taken steer is written, then the input ends", async () => {
    const steering = new ScriptedSteering();
    const gate = deferred();
    steering.gate = gate.promise;
    steering.push("S");
    const prompt = new SteeredPrompt("P", steering, new AbortController().signal);
    const input = prompt.messages();
    expect(textOf(await written(input))).toBe("P");
    const s = input.next();
    await steering.taking.promise;
    prompt.answered(result());
    // Another steer arrives; the older CLI cannot say what it answers, so it waits for a follow-up turn.
    steering.push("T");
    gate.resolve();
    const steer = await s;
    expect(steer.done ? undefined : textOf(steer.value)).toBe("S");
    expect((await input.next()).done).toBe(true);
    expect(steering.takes).toBe(1);
    expect(steering.waiting).toEqual(["T"]);
  });

  it("a result between two steers of one take does not end the input before the second is answered", async () => {
    const steering = new ScriptedSteering();
    steering.push("S1");
    steering.push("S2");
    const prompt = new SteeredPrompt("P", steering, new AbortController().signal);
    const input = prompt.messages();
    const p = await written(input);
    const s1 = await written(input);
    prompt.answered(result([p.uuid ?? "", s1.uuid ?? ""]));
    const s2 = await written(input);
    expect(textOf(s2)).toBe("S2");
    const end = input.next();
    // Still open for S2's answer (or more steers) rather than ended with S2 unanswered.
    expect((await steering.waited(2)).aborted).toBe(false);
    prompt.answered(result([s2.uuid ?? ""]));
    expect((await end).done).toBe(true);
  });
});
