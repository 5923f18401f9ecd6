import type { Runtime, RuntimeEvent, RuntimeRun } from "../../src/model/runtime.js";

export interface HeldRun {
  input: string;
  /** The user messages the runtime was given, oldest first. */
  userMessages: string[];
  /** Lets the run finish with `<input> done`. */
  release(): void;
  aborted: boolean;
}

/**
 * A runtime whose every run streams `partial:<input>` and then blocks until the test releases it (or the
 * turn's signal aborts it): turns that stay running exactly as long as a test needs, without sleeps.
 */
export class HeldRuntime {
  readonly runs: HeldRun[] = [];
  private waiters: Array<{ count: number; resolve: () => void }> = [];

  readonly runtime: Runtime = {
    kind: "held",
    keeps: { runtimeSessions: false, costs: false },
    run: (run) => this.run(run),
  };

  /** Resolves once `count` runs have started. */
  started(count: number): Promise<void> {
    if (this.runs.length >= count) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ count, resolve }));
  }

  private async *run(run: RuntimeRun): AsyncGenerator<RuntimeEvent, void, undefined> {
    yield { type: "text", delta: `partial:${run.input}` };
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const held: HeldRun = {
      input: run.input,
      userMessages: run.messages.filter((m) => m.role === "user").map((m) => m.content),
      release,
      aborted: false,
    };
    this.runs.push(held);
    this.waiters = this.waiters.filter((w) => {
      if (this.runs.length < w.count) return true;
      w.resolve();
      return false;
    });
    const aborted = new Promise<never>((_, reject) => {
      run.signal.addEventListener("abort", () => {
        held.aborted = true;
        reject(new Error("aborted"));
      });
    });
    aborted.catch(() => {});
    await Promise.race([released, aborted]);
    yield { type: "text", delta: " done" };
  }
}
