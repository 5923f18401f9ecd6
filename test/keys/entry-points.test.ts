import { describe, expect, it } from "vitest";
import type { RoutingConfig } from "../../src/keys/index.js";
import { defaultRoutingConfig, routeEnvelope } from "../../src/keys/index.js";
import type { EntryPoint, Envelope } from "../../src/model/envelope.js";
import { isSessiondError } from "../../src/model/errors.js";

const config = defaultRoutingConfig({ defaultAgent: "main", agents: ["main", "ops"] });

function env(entryPoint: EntryPoint, extra: Partial<Envelope> = {}): Envelope {
  return {
    channel: "web",
    chat: { type: "group", id: "ignored" },
    sender: { id: "u1" },
    text: "hi",
    entryPoint,
    ...extra,
  };
}

function key(envelope: Envelope, routing: RoutingConfig = config): string {
  return routeEnvelope(envelope, routing).key;
}

function errorOf(fn: () => unknown): { code: string; field: unknown } | undefined {
  try {
    fn();
  } catch (error) {
    if (isSessiondError(error)) return { code: error.code, field: error.details?.field };
    throw error;
  }
  return undefined;
}

describe("entry points name their own sessions", () => {
  it("an explicit channel entry point routes like no entry point", () => {
    const envelope = env({ kind: "channel" }, { channel: "telegram", chat: { type: "direct", id: "7" } });
    expect(key(envelope)).toBe("main:telegram:7");
  });

  describe("web UI chat", () => {
    it("defaults to admin-session, direct, created by the sender, without agent prefix", () => {
      expect(routeEnvelope(env({ kind: "web_chat" }), config)).toEqual({
        key: "admin-session",
        agent: "main",
        channel: "web",
        chatType: "direct",
        createdBy: "u1",
      });
    });

    it("uses an admin-… session id the page made", () => {
      expect(key(env({ kind: "web_chat", sessionId: "admin-01JABC" }))).toBe("admin-01JABC");
      expect(key(env({ kind: "web_chat", sessionId: "admin-session" }))).toBe("admin-session");
    });

    it.each(["telegram:1", "admin", "admin-", "Admin-x", "p2p:u1:main"])(
      "rejects %j with INVALID_KEY",
      (id) => {
        expect(errorOf(() => key(env({ kind: "web_chat", sessionId: id })))?.code).toBe("INVALID_KEY");
      },
    );
  });

  describe("WebSocket", () => {
    it("channel web → admin-conn-<connectionId>", () => {
      expect(key(env({ kind: "websocket", connectionId: "c42", web: true }))).toBe("admin-conn-c42");
    });

    it("channel web → the admin-… id the client sends", () => {
      expect(key(env({ kind: "websocket", connectionId: "c42", web: true, sessionId: "admin-x" }))).toBe(
        "admin-x",
      );
    });

    it("channel web refuses a non-admin id with INVALID_KEY, as the web chat does", () => {
      expect(() =>
        key(env({ kind: "websocket", connectionId: "c42", web: true, sessionId: "telegram:1" })),
      ).toThrow(expect.objectContaining({ code: "INVALID_KEY" }));
    });

    it("other clients → the session id they send", () => {
      expect(key(env({ kind: "websocket", connectionId: "c1", web: false, sessionId: "my-session" }))).toBe(
        "my-session",
      );
    });

    it("other clients without an id → p2p:<senderId>:<defaultAgent>", () => {
      const route = routeEnvelope(
        env({ kind: "websocket", connectionId: "c1", web: false }, { agent: "ops", channel: "cli" }),
        config,
      );
      expect(route.key).toBe("p2p:u1:main");
      expect(route.agent).toBe("main");
      expect(route.channel).toBe("cli");
    });

    it("a sent id that is not a valid key is INVALID_KEY", () => {
      expect(
        errorOf(() => key(env({ kind: "websocket", connectionId: "c1", web: false, sessionId: "a\u0000" })))
          ?.code,
      ).toBe("INVALID_KEY");
    });
  });

  describe("/api/webhook", () => {
    it("→ p2p:<senderId>:<defaultAgent>", () => {
      expect(key(env({ kind: "webhook" }, { channel: "cli", sender: { id: "cron" } }))).toBe("p2p:cron:main");
    });

    it("channel web with the gateway token → admin-session", () => {
      expect(key(env({ kind: "webhook", gatewayToken: true }))).toBe("admin-session");
      expect(key(env({ kind: "webhook", gatewayToken: true }, { channel: "cli" }))).toBe("p2p:u1:main");
      expect(key(env({ kind: "webhook", gatewayToken: false }))).toBe("p2p:u1:main");
    });

    it("with subjectRef → p2p:<senderId>:<agent>:for:<subjectRef>", () => {
      expect(key(env({ kind: "webhook", subjectRef: "alice" }, { channel: "cli" }))).toBe(
        "p2p:u1:main:for:alice",
      );
      const route = routeEnvelope(env({ kind: "webhook", subjectRef: "bob" }, { agent: "ops" }), config);
      expect(route.key).toBe("p2p:u1:ops:for:bob");
      expect(route.agent).toBe("ops");
    });

    it("an empty subjectRef is INVALID_ARGUMENT", () => {
      expect(errorOf(() => key(env({ kind: "webhook", subjectRef: "" })))).toEqual({
        code: "INVALID_ARGUMENT",
        field: "entryPoint.subjectRef",
      });
    });
  });

  it("OpenAI-compatible API → openai-compat:<clientIp>, created by the ip", () => {
    const route = routeEnvelope(
      env({ kind: "openai_compat", clientIp: "10.0.0.7" }, { sender: { id: "" } }),
      config,
    );
    expect(route.key).toBe("openai-compat:10.0.0.7");
    expect(route.createdBy).toBe("10.0.0.7");
    expect(route.chatType).toBe("direct");
  });

  describe("App API", () => {
    it("→ app_api:<user> and app_api:<user>/<sessionId>, created by the user", () => {
      const route = routeEnvelope(env({ kind: "app_api", user: "bob" }), config);
      expect(route.key).toBe("app_api:bob");
      expect(route.createdBy).toBe("bob");
      expect(key(env({ kind: "app_api", user: "bob", sessionId: "s1" }))).toBe("app_api:bob/s1");
    });

    it("URL-escapes both parts, so a / in the user cannot fake a session", () => {
      const route = routeEnvelope(env({ kind: "app_api", user: "bob/x" }), config);
      expect(route.key).toBe("app_api:bob%2Fx");
      expect(route.createdBy).toBe("bob/x");
      expect(route.key).not.toBe(key(env({ kind: "app_api", user: "bob", sessionId: "x" })));
      expect(key(env({ kind: "app_api", user: "a b:ü", sessionId: "s/1?#" }))).toBe(
        "app_api:a%20b%3A%C3%BC/s%2F1%3F%23",
      );
    });

    it("an empty user is INVALID_ARGUMENT", () => {
      expect(errorOf(() => key(env({ kind: "app_api", user: "" })))).toEqual({
        code: "INVALID_ARGUMENT",
        field: "entryPoint.user",
      });
    });
  });

  describe("chat webhook", () => {
    it("→ webhook:<agent>:<type>:<entity>", () => {
      expect(
        key(env({ kind: "chat_webhook", type: "gitlab_mr", entity: "group/proj!12" }, { agent: "ops" })),
      ).toBe("webhook:ops:gitlab_mr:group/proj!12");
      expect(key(env({ kind: "chat_webhook", type: "alert", entity: "disk" }))).toBe(
        "webhook:main:alert:disk",
      );
    });

    it("→ webhook:<agent>:<type>:ts-<at> without an entity", () => {
      expect(key(env({ kind: "chat_webhook", type: "alert", at: 1700000000000 }))).toBe(
        "webhook:main:alert:ts-1700000000000",
      );
    });

    it("falls back to receivedAt, then to now", () => {
      expect(key(env({ kind: "chat_webhook", type: "alert" }, { receivedAt: 1234 }))).toBe(
        "webhook:main:alert:ts-1234",
      );
      const before = Date.now();
      const at = Number(key(env({ kind: "chat_webhook", type: "alert" })).split("ts-")[1]);
      expect(at).toBeGreaterThanOrEqual(before);
      expect(at).toBeLessThanOrEqual(Date.now());
    });

    it("rejects a non-integer time", () => {
      expect(errorOf(() => key(env({ kind: "chat_webhook", type: "alert", at: 1.5 })))).toEqual({
        code: "INVALID_ARGUMENT",
        field: "entryPoint.at",
      });
    });
  });

  it("subagent run → agent:<parentAgent>:subagent:job-<at>, owned by the parent", () => {
    const route = routeEnvelope(env({ kind: "subagent", parentAgent: "ops", at: 1700000000123 }), config);
    expect(route.key).toBe("agent:ops:subagent:job-1700000000123");
    expect(route.agent).toBe("ops");
  });
});
