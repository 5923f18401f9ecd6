import { describe, expect, it } from "vitest";
import { statelessWindow, type WindowMessage, windowBudget } from "../../src/context/index.js";

const OPERATOR = "[Human operator]: Please continue.";
const u = (content: string): WindowMessage => ({ role: "user", content });
const a = (content: string): WindowMessage => ({ role: "assistant", content });
const text = (tag: string, length: number): string => tag + ".".repeat(length - tag.length);

describe("windowBudget", () => {
  it("is floor(contextWindow × fraction × chars per token)", () => {
    expect(windowBudget()).toBe(28_000);
    expect(windowBudget({ contextWindow: 16_000 })).toBe(28_000);
    expect(windowBudget({ contextWindow: 1001 })).toBe(1751);
    expect(windowBudget({ contextWindow: 8000, budgetFraction: 0.25, charsPerToken: 4 })).toBe(8000);
  });
});

describe("statelessWindow: budget", () => {
  const history = [
    u(text("u1", 1000)),
    a(text("a1", 1000)),
    u(text("u2", 1000)),
    a(text("a2", 1000)),
    u(text("u3", 1000)),
  ];

  it("walks newest to oldest and stops before the message that would pass the budget", () => {
    // 2000 × 0.5 × 3.5 = 3500 characters: three messages of 1000 fit, the fourth would pass.
    const out = statelessWindow(history, { contextWindow: 2000 });
    expect(out.map((m) => m.content.slice(0, 2))).toEqual(["u2", "a2", "u3"]);
  });

  it("keeps a message that lands exactly on the budget", () => {
    const out = statelessWindow(history, { contextWindow: 3000, budgetFraction: 1, charsPerToken: 1 });
    expect(out.map((m) => m.content.slice(0, 2))).toEqual(["u2", "a2", "u3"]);
    const tighter = statelessWindow(history, { contextWindow: 2999, budgetFraction: 1, charsPerToken: 1 });
    // a2 + u3 fit; a2 is then a leading assistant message and goes.
    expect(tighter.map((m) => m.content.slice(0, 2))).toEqual(["u3"]);
  });

  it("uses 28,000 characters by default", () => {
    const many = Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? u : a)(text(`m${i}:`, 1000)));
    const out = statelessWindow(many);
    // m12..m39 (28 × 1000), then the operator prompt, since m39 is the assistant's.
    expect(out.at(-1)!.content).toBe(OPERATOR);
    expect(out.slice(0, -1).reduce((sum, m) => sum + m.content.length, 0)).toBe(28_000);
    expect(out[0]!.content.startsWith("m12:")).toBe(true);
  });

  it("always keeps the newest message, even alone over the budget", () => {
    const huge = text("big", 50_000);
    const out = statelessWindow([u("older"), a("reply"), u(huge)]);
    expect(out).toEqual([{ role: "user", content: huge }]);
  });

  it("considers at most maxMessages recent messages (60 by default)", () => {
    const many = Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? u : a)(`m${i}`));
    const all = statelessWindow(many);
    expect(all.map((m) => m.content)).toEqual([
      ...Array.from({ length: 60 }, (_, i) => `m${40 + i}`),
      OPERATOR,
    ]);
    const five = statelessWindow(many, { maxMessages: 5 });
    // m95 (assistant) leads and goes; m96..m99 stay, and the last is the assistant's.
    expect(five.map((m) => m.content)).toEqual(["m96", "m97", "m98", "m99", OPERATOR]);
  });
});

describe("statelessWindow: shape", () => {
  it("merges consecutive messages of one role", () => {
    const out = statelessWindow([u("a"), u("b"), a("c"), a("d"), u("e")]);
    expect(out).toEqual([
      { role: "user", content: "a\n\nb" },
      { role: "assistant", content: "c\n\nd" },
      { role: "user", content: "e" },
    ]);
  });

  it("drops leading assistant messages", () => {
    expect(statelessWindow([a("x"), a("y"), u("q")])).toEqual([{ role: "user", content: "q" }]);
  });

  it("appends the operator prompt when the window ends with the assistant or is empty", () => {
    expect(statelessWindow([u("q"), a("r")])).toEqual([
      { role: "user", content: "q" },
      { role: "assistant", content: "r" },
      { role: "user", content: OPERATOR },
    ]);
    expect(statelessWindow([])).toEqual([{ role: "user", content: OPERATOR }]);
    expect(statelessWindow([a("only")])).toEqual([{ role: "user", content: OPERATOR }]);
    expect(statelessWindow([], { operatorPrompt: "go on" })).toEqual([{ role: "user", content: "go on" }]);
  });

  it("does not change its input", () => {
    const input = [u("a"), u("b"), a("c")];
    const copy = structuredClone(input);
    statelessWindow(input);
    expect(input).toEqual(copy);
  });
});

describe("statelessWindow: participants", () => {
  const alice = { id: "u-alice", name: "Alice" };
  const bob = { id: "u-bob" };
  const bot = { id: "bot", name: "Bot" };
  const helper = { id: "helper", name: "Helper" };

  it("prefixes other participants, marks what is addressed to the agent, and keeps its own replies plain", () => {
    const out = statelessWindow(
      [
        { role: "user", content: "hi all", sender: alice },
        { role: "user", content: "@bot status?", sender: bob, addressedTo: ["bot"] },
        { role: "assistant", content: "all green", sender: bot },
        { role: "assistant", content: "me too", sender: helper },
        { role: "user", content: "thanks", sender: alice, addressedTo: ["helper"] },
      ],
      { self: "bot" },
    );
    expect(out).toEqual([
      { role: "user", content: "[Alice] hi all\n\n[u-bob → you] @bot status?" },
      { role: "assistant", content: "all green" },
      { role: "user", content: "[Helper] me too\n\n[Alice] thanks" },
    ]);
  });

  it("treats another agent's reply as a participant's message, so it is not dropped as leading", () => {
    const out = statelessWindow(
      [
        { role: "assistant", content: "from helper", sender: helper },
        { role: "user", content: "ok", sender: alice },
      ],
      { self: "bot" },
    );
    expect(out).toEqual([{ role: "user", content: "[Helper] from helper\n\n[Alice] ok" }]);
  });

  it("adds no prefixes in a one-to-one conversation unless told to", () => {
    const messages: WindowMessage[] = [
      { role: "user", content: "hi", sender: alice, addressedTo: ["bot"] },
      { role: "assistant", content: "hello", sender: bot },
      { role: "user", content: "bye", sender: alice },
    ];
    expect(statelessWindow(messages, { self: "bot" }).map((m) => m.content)).toEqual(["hi", "hello", "bye"]);
    expect(statelessWindow(messages, { self: "bot", multiParty: true }).map((m) => m.content)).toEqual([
      "[Alice → you] hi",
      "hello",
      "[Alice] bye",
    ]);
  });

  it("counts the prefixes against the budget", () => {
    const messages: WindowMessage[] = [
      { role: "user", content: "x".repeat(10), sender: alice },
      { role: "user", content: "y".repeat(10), sender: bob },
    ];
    // "[Alice] " + 10 = 18, "[u-bob] " + 10 = 18: 36 passes a budget of 35.
    const out = statelessWindow(messages, { contextWindow: 35, budgetFraction: 1, charsPerToken: 1 });
    expect(out).toEqual([{ role: "user", content: `[u-bob] ${"y".repeat(10)}` }]);
  });
});
