import { describe, expect, it } from "vitest";
import {
  FALLBACK_TITLE,
  type FirstExchange,
  offlineTitle,
  sanitizeTitle,
  titleFromExchange,
} from "../../src/lifecycle/titles.js";
import { ECHO_LABEL } from "../../src/model/runtime.js";
import type { Completion, CompletionRequest, TextModel } from "../../src/model/text-model.js";

function fakeModel(answer: string | Error): TextModel & { calls: CompletionRequest[] } {
  const calls: CompletionRequest[] = [];
  return {
    provider: "anthropic",
    model: "claude-fake",
    calls,
    async complete(request: CompletionRequest): Promise<Completion> {
      calls.push(request);
      if (answer instanceof Error) throw answer;
      return { text: answer, model: "claude-fake" };
    },
  };
}

const words = (title: string) => title.split(" ").length;

const exchange = {
  user: "How do I configure Nginx as a reverse proxy for WebSockets?",
  assistant: "Use proxy_pass with the Upgrade and Connection headers set.",
};

describe("titleFromExchange with a model", () => {
  it("asks with both messages cut to 200 characters and returns the sanitised answer", async () => {
    const model = fakeModel('"Nginx WebSocket Reverse Proxy."');
    const long = { user: `${"u".repeat(250)}USER_TAIL`, assistant: `${"a".repeat(250)}ASSISTANT_TAIL` };
    expect(await titleFromExchange(long, model)).toBe("Nginx WebSocket Reverse Proxy");
    const [call] = model.calls;
    expect(call?.system).toMatch(/3 to 6 words/);
    expect(call?.user).toContain("u".repeat(200));
    expect(call?.user).not.toContain("USER_TAIL");
    expect(call?.user).not.toContain("ASSISTANT_TAIL");
    expect(call?.maxTokens).toBeLessThanOrEqual(32);
  });

  it.each([
    ["Title: **Setting up Nginx proxy**", "Setting up Nginx proxy"],
    ["“Planning a family trip to Lisbon in May with kids”", "Planning a family trip to Lisbon"],
    ["\n\n'Fixing the login crash'!\nSecond line ignored", "Fixing the login crash"],
    ["Debugging `pnpm install` failures on CI.", "Debugging pnpm install failures on CI"],
  ])("sanitises %j", async (answer, expected) => {
    expect(await titleFromExchange(exchange, fakeModel(answer))).toBe(expected);
  });

  it.each(["", "   ", "Nginx", "Nginx proxy.", '""'])(
    "falls back to the offline title on %j",
    async (answer) => {
      expect(await titleFromExchange(exchange, fakeModel(answer))).toBe(offlineTitle(exchange));
    },
  );

  it("falls back to the offline title when the model fails", async () => {
    const title = await titleFromExchange(exchange, fakeModel(new Error("503 overloaded")));
    expect(title).toBe("Configure Nginx reverse proxy WebSockets");
  });

  it("rejects when the caller aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(
      titleFromExchange(exchange, fakeModel("Some fine title here"), controller.signal),
    ).rejects.toBeDefined();
  });
});

describe("sanitizeTitle", () => {
  it("cuts to six words and trims what the cut leaves at the end", () => {
    expect(sanitizeTitle("One two three four five six, seven eight")).toBe("One two three four five six");
    expect(sanitizeTitle("Alpha beta gamma delta epsilon zeta: eta")).toBe(
      "Alpha beta gamma delta epsilon zeta",
    );
  });
});

describe("offlineTitle", () => {
  it.each([
    [
      "How do I configure Nginx as a reverse proxy for WebSockets?",
      "Configure Nginx reverse proxy WebSockets",
    ],
    [
      "Deploy the app to Fly.io please, and fix src/server.ts (it crashes on port 8080).",
      "Deploy app Fly.io src/server.ts crashes 8080",
    ],
    [
      "Can you help me plan a trip to Lisbon in May with my kids? We love museums and beaches and food.",
      "Plan trip Lisbon kids museums beaches",
    ],
    ["Why does PROJ-123 fail on main?", "PROJ-123 fail main"],
  ])("%j", (user, expected) => {
    const title = offlineTitle({ user, assistant: "" });
    expect(title).toBe(expected);
    expect(words(title)).toBeGreaterThanOrEqual(3);
    expect(words(title)).toBeLessThanOrEqual(6);
  });

  it("borrows from the assistant's reply when the user said too little", () => {
    expect(offlineTitle({ user: "hi", assistant: "Hello! Want help with Docker networking?" })).toBe(
      "Chat about Docker networking",
    );
    expect(offlineTitle({ user: "Kafka lag?", assistant: "Consumer group rebalancing causes it." })).toBe(
      "Kafka lag consumer",
    );
  });

  it("never returns an empty title", () => {
    expect(offlineTitle({ user: "", assistant: "" })).toBe("Conversation without a topic");
    expect(offlineTitle({ user: "?!", assistant: "ok" })).toBe("Conversation without a topic");
    expect(offlineTitle({ user: "Kubernetes?", assistant: "" })).toBe("Chat about Kubernetes");
  });

  it("is 3–6 real words from what was said: never the key, the echo runtime's boilerplate or a secret", () => {
    const echo = (input: string, key: string) =>
      `${ECHO_LABEL} You said: ${JSON.stringify(input)}. Session ${key}: 1 entry, ~5 tokens.`;
    const cases: Array<[FirstExchange, string]> = [
      [
        { user: "Invoice 4471", assistant: echo("Invoice 4471", "p2p:alice:main"), key: "p2p:alice:main" },
        "Chat about Invoice 4471",
      ],
      [
        { user: "websocket", assistant: echo("websocket", "admin-conn-1"), key: "admin-conn-1" },
        "Chat about websocket",
      ],
      [
        {
          user: '{"hello":"world"}',
          assistant: echo('{"hello":"world"}', "webhook:main:ci:ts-1"),
          key: "webhook:main:ci:ts-1",
        },
        "Chat about world",
      ],
      [
        { user: "my key is sk-abc123def456ghi789jkl0mn for billing", assistant: "", key: "telegram:1" },
        "Chat about key billing",
      ],
      [
        { user: "admin-session", assistant: echo("admin-session", "admin-session"), key: "admin-session" },
        FALLBACK_TITLE,
      ],
    ];
    for (const [exchange, expected] of cases) {
      const title = offlineTitle(exchange);
      expect(title).toBe(expected);
      expect(words(title)).toBeGreaterThanOrEqual(3);
      expect(words(title)).toBeLessThanOrEqual(6);
    }
  });

  it("refuses a model title that carries the key or a secret, for the offline one", async () => {
    const key = "p2p:alice:main";
    const leaky = fakeModel(`Invoice for ${key} today`);
    expect(await titleFromExchange({ user: "Invoice 4471 is late", assistant: "", key }, leaky)).toBe(
      "Invoice 4471 late",
    );
    const secret = fakeModel("Token sk-abc123def456ghi789jkl0mn rotation plan");
    expect(await titleFromExchange({ user: "Rotate the API token please", assistant: "", key }, secret)).toBe(
      "Rotate API token",
    );
  });

  it("keeps at most six words from a long message, in their original order", () => {
    const user =
      "Please review the Terraform module for the Postgres cluster, the Redis cache, the Kafka topics, the S3 buckets and the IAM roles";
    const title = offlineTitle({ user, assistant: "" });
    expect(title).toBe("Terraform Postgres Redis Kafka S3 IAM");
    const positions = title.split(" ").map((w) => user.indexOf(w));
    expect(positions.every((p) => p >= 0)).toBe(true);
    expect([...positions].sort((a, b) => a - b)).toEqual(positions);
  });
});

describe("titles are built from scrubbed text only", () => {
  // A random token of 48 characters, cut by the 200-character window after 28 of them: alone, the 28 would
  // no longer look like a secret.
  const token = "Zq4mX9rT2vL7wK1pN8bJ5cH3fG6dS0aEyUiO2eRt7WqP3nMa";
  const user = `Deploy ${"please ".repeat(23)}now ${token} thanks`;

  it("the model is never asked with a piece of a secret cut at the window", async () => {
    expect(user.indexOf(token)).toBeLessThan(200);
    expect(user.indexOf(token) + token.length).toBeGreaterThan(200);
    const model = fakeModel("Deploy Request");
    await titleFromExchange({ user, assistant: "ok" }, model);
    const asked = model.calls[0]?.user ?? "";
    for (let i = 0; i + 8 <= token.length; i += 4) expect(asked).not.toContain(token.slice(i, i + 8));
  });

  it("nor does an offline title take a piece of one", () => {
    const title = offlineTitle({ user, assistant: "ok" });
    for (let i = 0; i + 8 <= token.length; i += 4) expect(title).not.toContain(token.slice(i, i + 8));
  });
});
