import { describe, expect, it } from "vitest";
import type { ChatMessage } from "../../src/context/index.js";
import { createEngine } from "../../src/engine.js";
import type { TextModel } from "../../src/model/text-model.js";

/** A model whose context window is 100 tokens: the §4 budget is floor(100 × 0.5 × 3.5) = 175 characters. */
const tiny: TextModel = {
  provider: "openai",
  model: "tiny",
  contextWindow: 100,
  complete: async () => ({ text: "unused", model: "tiny" }),
};

describe("what a stateless model agent sees (behaviours §4) against an agent with its own session", () => {
  it("gives a model agent the LoCrew window: sender prefixes, the character budget, the newest kept", async () => {
    const engine = await createEngine({
      store: { backend: "memory" },
      agents: ["helper", "coder"],
      defaultAgent: "helper",
      models: { tiny },
      agentOptions: { helper: { model: "tiny" }, coder: { runtime: "claude-code", model: "sonnet" } },
      titles: { enabled: false },
      lifecycle: { sweepIntervalMs: 0 },
    });
    const seen = new Map<string, ChatMessage[]>();
    for (const agent of ["helper", "coder"]) {
      const where = { agent, channel: "slack", chat: { type: "group" as const, id: "team" } };
      const key = engine.route({ ...where, sender: { id: "x" }, text: "x" }).key;
      await engine.append(
        key,
        Array.from({ length: 10 }, (_, i) => ({
          type: "message" as const,
          role: "user" as const,
          content: `message number ${i} from the team, padded to about fifty chars`,
          sender: { id: i % 2 ? "bob" : "carol" },
        })),
      );
      await engine.turnWith({ ...where, sender: { id: "bob" }, text: "what now?" }, async (context) => {
        seen.set(agent, context.messages);
        return "ok";
      });
    }
    const windowed = seen.get("helper") ?? [];
    expect(windowed).toHaveLength(1);
    expect(windowed[0]?.role).toBe("user");
    expect(windowed[0]?.content).toMatch(
      /\[carol\] message number 8 .*\n\n\[bob\] message number 9 .*\n\n\[bob\] what now\?$/s,
    );
    expect(windowed[0]?.content.length).toBeLessThanOrEqual(175);
    expect(seen.get("coder")).toHaveLength(11);
    await engine.close();
  });
});
