import { randomUUID } from "node:crypto";
import type { SDKResultMessage, SDKUserMessage } from "@anthropic-ai/claude-agent-sdk";
import type { RuntimeSteering } from "../model/runtime.js";

/**
 * The prompt of a Claude Code run that takes steers (queue mode `steer`), in the SDK's streaming input
 * mode: the run's prompt, then each steer the moment it arrives, stamped with a uuid and priority `next`.
 * The CLI queues such a message and folds it into the running turn after the tool call in flight; one it
 * has not folded when the turn ends runs as its next turn in the same process. The result of each turn
 * lists the uuids it consumed (`user_message_uuids`), so the input ends — and the CLI exits — after the
 * first result that leaves no written message unanswered. A result that lists none (an older CLI, or
 * one naming only the turn's own `user_message_uuid`) cannot say which steers it folded: the input then
 * ends as soon as nothing is being written. A steer the CLI had queued rather than folded it still
 * answers before it exits (the run reads on until then); one arriving later is never written to it and
 * waits as a follow-up turn.
 */
export class SteeredPrompt {
  /** Written to the CLI, not yet listed by a result. */
  private readonly unanswered = new Set<string>();
  private results = 0;
  /** A result listed no `user_message_uuids`: what the CLI answered is unknown, so no steer is written after. */
  private unlisted = false;
  /** A `take` in flight, or its messages not all written yet: the run is not over. */
  private taking = false;
  private readonly over = new AbortController();

  constructor(
    private readonly prompt: string,
    private readonly steering: RuntimeSteering,
    private readonly signal: AbortSignal,
  ) {}

  async *messages(): AsyncGenerator<SDKUserMessage, void, undefined> {
    yield this.written(this.prompt);
    const stop = AbortSignal.any([this.over.signal, this.signal]);
    while ((await this.steering.wait(stop)) && !stop.aborted) {
      this.taking = true;
      try {
        // Taken steers are stored already: each is written even if a result comes meanwhile.
        for (const text of await this.steering.take()) yield { ...this.written(text), priority: "next" };
      } finally {
        this.taking = false;
      }
      if (this.settled()) return;
    }
  }

  /** Called with each result: once none of the messages written waits for an answer, the input ends. */
  answered(result: SDKResultMessage): void {
    this.results += 1;
    // `user_message_uuid` alone names the turn's prompt, not the steers it folded: as good as no list.
    if (result.user_message_uuids === undefined) this.unlisted = true;
    else for (const uuid of result.user_message_uuids) this.unanswered.delete(uuid);
    if (this.settled()) this.close();
  }

  /** Ends the input: a steer arriving from now on waits as a follow-up. */
  close(): void {
    this.over.abort();
  }

  private settled(): boolean {
    return this.results > 0 && !this.taking && (this.unlisted || this.unanswered.size === 0);
  }

  private written(text: string): SDKUserMessage {
    const uuid = randomUUID();
    this.unanswered.add(uuid);
    return {
      type: "user",
      session_id: "",
      message: { role: "user", content: [{ type: "text", text }] },
      parent_tool_use_id: null,
      uuid,
    };
  }
}
