import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startA2aAgent } from "../support/a2a-server.js";
import { waitFor } from "../support/child-output.js";
import { FAKE_CLAUDE, FAKE_CODEX, useFakeCliState } from "../support/fake-clis.js";
import { serveGateway } from "../support/serve-child.js";
import { type ReceivedSpan, startOtlpReceiver } from "./otlp-receiver.js";

const TOKEN = "otel-carry-token-0123456789abcdef";
const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
const CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";
const CALLER = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`;
/** What the gateway's own environment holds from whoever started it: never paired with its own traceparent. */
const STALE = {
  TRACEPARENT: "00-11111111111111111111111111111111-2222222222222222-01",
  TRACESTATE: "stale=1",
};

const claude = useFakeCliState("FAKE_CLAUDE_STATE");
const codex = useFakeCliState("FAKE_CODEX_STATE");

interface CliCall {
  env: { TRACEPARENT?: string; TRACESTATE?: string; otel: string[] };
}

/** A gateway with three agents (A2A, Claude Code, Codex), each talking to its local stand-in. */
async function gateway(dir: string, a2aUrl: string, env: Record<string, string>) {
  writeFileSync(
    join(dir, "sessiond.yaml"),
    [
      "agents:",
      `  - { id: remote, runtime: a2a, url: "${a2aUrl}" }`,
      `  - { id: dev, runtime: claude-code, executable: "${FAKE_CLAUDE}", cwd: "${dir}" }`,
      `  - { id: cx, runtime: codex, executable: "${FAKE_CODEX}", cwd: "${dir}" }`,
      "default_agent: remote",
      "titles: { enabled: false }",
      "",
    ].join("\n"),
  );
  const served = serveGateway(dir, TOKEN, [], env);
  const url = await served.listening();
  const chat = async (agent: string, sessionId: string, headers: Record<string, string> = {}) => {
    const res = await fetch(`${url}/api/chat`, {
      method: "POST",
      headers: { ...auth, ...headers },
      body: JSON.stringify({ message: `hello ${agent}`, sender: "alice", session_id: sessionId, agent }),
    });
    expect(res.status, await res.clone().text()).toBe(200);
  };
  const stop = async () => {
    const exited = new Promise((r) => served.child.once("exit", r));
    served.child.kill("SIGTERM");
    await exited;
  };
  return { served, chat, stop };
}

const parentOf = (span: ReceivedSpan) => `00-${span.traceId}-${span.spanId}-01`;

describe("trace context carried to the runtimes", () => {
  it("A2A requests carry the turn's traceparent; Claude Code and Codex get it as TRACEPARENT, replacing the gateway's own", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-otel-carry-"));
    const receiver = await startOtlpReceiver();
    const agent = await startA2aAgent();
    const tracingEnv = {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.origin,
      OTEL_EXPORTER_OTLP_HEADERS: "x-otlp-key=otlp-secret-value",
      OTEL_BSP_SCHEDULE_DELAY: "50",
    };
    const { served, chat, stop } = await gateway(dir, agent.url, { ...tracingEnv, ...STALE });
    try {
      await waitFor(served.child, /tracing: OTLP\/HTTP/, served.output);
      await chat("remote", "admin-carry-a2a", { traceparent: CALLER, tracestate: "caller=a2a" });
      await chat("remote", "admin-carry-a2a");
      await chat("dev", "admin-carry-claude", { traceparent: CALLER });
      await chat("cx", "admin-carry-codex", { traceparent: CALLER, tracestate: "caller=codex" });
      await stop();

      const turns = (name: string) => receiver.spans.filter((s) => s.name === `invoke_agent ${name}`);
      // A2A: each JSON-RPC call names its own turn's span, in the caller's trace and then in a new one.
      const [a2a1, a2a2] = turns("remote") as [ReceivedSpan, ReceivedSpan];
      expect(a2a1.traceId).toBe(CALLER_TRACE);
      expect(a2a2.traceId).not.toBe(CALLER_TRACE);
      expect(agent.http.filter((r) => r.path === "/a2a")).toEqual([
        { path: "/a2a", traceparent: parentOf(a2a1), tracestate: "caller=a2a" },
        { path: "/a2a", traceparent: parentOf(a2a2) },
      ]);

      // Claude Code: its span's traceparent; the gateway's inherited TRACESTATE is dropped, not paired with it.
      const [dev] = turns("dev") as [ReceivedSpan];
      expect(dev.traceId).toBe(CALLER_TRACE);
      const [claudeCall] = claude.calls<CliCall>();
      expect(claudeCall?.env).toMatchObject({ TRACEPARENT: parentOf(dev) });
      expect(claudeCall?.env.TRACESTATE).toBeUndefined();
      // Codex: the same, with the caller's tracestate.
      const [cx] = turns("cx") as [ReceivedSpan];
      const [codexCall] = codex.calls<CliCall>();
      expect(codexCall?.env).toMatchObject({ TRACEPARENT: parentOf(cx), TRACESTATE: "caller=codex" });
      // No OTEL_* variable beyond those the gateway has (and its children inherited before).
      const given = Object.keys({ ...process.env, ...tracingEnv })
        .filter((name) => name.startsWith("OTEL_"))
        .sort();
      expect(claudeCall?.env.otel).toEqual(given);
      expect(codexCall?.env.otel).toEqual(given);
    } finally {
      served.kill();
      await agent.close();
      await receiver.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("with tracing off nothing is added: no traceparent header, and the children inherit the environment as it is", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-otel-carry-off-"));
    const agent = await startA2aAgent();
    const { served, chat, stop } = await gateway(dir, agent.url, STALE);
    try {
      await chat("remote", "admin-off-a2a", { traceparent: CALLER });
      await chat("dev", "admin-off-claude", { traceparent: CALLER });
      await chat("cx", "admin-off-codex", { traceparent: CALLER });
      await stop();
      expect(served.output.text).not.toContain("tracing:");
      expect(agent.http.filter((r) => r.path === "/a2a")).toEqual([{ path: "/a2a" }]);
      for (const call of [...claude.calls<CliCall>(), ...codex.calls<CliCall>()]) {
        expect(call.env).toMatchObject(STALE);
      }
      expect(claude.calls()).toHaveLength(1);
      expect(codex.calls()).toHaveLength(1);
    } finally {
      served.kill();
      await agent.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
