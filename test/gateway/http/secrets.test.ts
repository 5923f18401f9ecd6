import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EngineConfig } from "../../../src/config/engine-config.js";
import { createEngine } from "../../../src/engine.js";
import { createGatewayLogger } from "../../../src/gateway/logger.js";
import { type RunningGateway, startGateway } from "../../../src/gateway/server.js";
import { echoHandler, type OpenAiServer, startOpenAiServer } from "../../support/openai-server.js";
import { SECRET_CORPUS, type SecretSample, telltales } from "../../support/secret-corpus.js";
import { postJson, TOKEN } from "./helpers.js";

const sample = (name: string): SecretSample => {
  const found = SECRET_CORPUS.find((s) => s.name === name);
  if (!found) throw new Error(`no sample ${name}`);
  return found;
};
// The provider's key, and another one it echoes in its error (a key from somewhere else).
const PROVIDER_KEY = sample("OpenAI project key").secret;
const ECHOED = sample("Anthropic key").secret;
const KEY_ENV = "SESSIOND_SECRETS_TEST_KEY";
const SESSIONS = 4;

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

interface Leak {
  where: string;
  sample: string;
  piece: string;
}

/** Every telltale of every sample found in `text` (case-folded for file names, which are slugs). */
function leaksIn(where: string, text: string, fold = false): Leak[] {
  const haystack = fold ? text.toLowerCase() : text;
  return SECRET_CORPUS.flatMap((s) =>
    telltales(s.secret)
      .map((piece) => (fold ? piece.toLowerCase() : piece))
      .filter((piece) => haystack.includes(piece))
      .map((piece) => ({ where, sample: s.name, piece })),
  );
}

describe.each(["sqlite", "jsonl"] as const)("no secret reaches the %s data dir or the log", (backend) => {
  let upstream: OpenAiServer;
  let gateway: RunningGateway;
  let dataDir: string;
  let logDir: string;
  let logFile: string;
  const responses: string[] = [];

  const api = (path: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    headers.set("authorization", `Bearer ${TOKEN}`);
    return fetch(`${gateway.url}${path}`, { ...init, headers });
  };

  beforeAll(async () => {
    process.env[KEY_ENV] = PROVIDER_KEY;
    dataDir = mkdtempSync(join(tmpdir(), `sessiond-secrets-${backend}-`));
    logDir = mkdtempSync(join(tmpdir(), "sessiond-secrets-log-"));
    logFile = join(logDir, "gateway.log");
    upstream = await startOpenAiServer((body, request) => {
      const last = [...body.messages].reverse().find((m) => m.role === "user");
      const text = typeof last?.content === "string" ? last.content : "";
      if (text.includes("please fail")) {
        // Like a provider that quotes the key it was sent, and one from elsewhere.
        const message = `Incorrect API key provided: ${request.headers.authorization}; also tried ${ECHOED}`;
        return { status: 401, body: { error: { message, type: "invalid_request_error" } } };
      }
      if (text.includes("please call tools")) {
        return {
          content: "calling",
          toolCalls: SECRET_CORPUS.map((s, i) => ({
            id: `call_${i}`,
            name: `lookup_${s.contextual ? s.text : s.secret}`,
            arguments: JSON.stringify({ query: s.text, api_key: s.secret, nested: { note: s.text } }),
          })),
        };
      }
      return echoHandler(body, request);
    });
    const store: EngineConfig["store"] =
      backend === "sqlite"
        ? { backend, path: join(dataDir, "sessiond.db") }
        : { backend, path: join(dataDir, "sessions") };
    const config: EngineConfig = {
      dataDir,
      store,
      models: {
        upstream: { provider: "openai", baseUrl: upstream.baseUrl, model: "test-model", apiKeyEnv: KEY_ENV },
      },
      agentOptions: { main: { model: "upstream", compaction: { maxMessages: 8, keepRecent: 4 } } },
      titles: { enabled: true },
      lifecycle: { sweepIntervalMs: 0 },
    };
    const engine = await createEngine(config);
    const logger = createGatewayLogger({ destination: pino.destination({ dest: logFile, sync: true }) });
    gateway = await startGateway({
      engine,
      token: TOKEN,
      port: 0,
      logger,
      graceMs: 2000,
      webDir: false,
    });

    // Bodies: every sample as a chat message (the echo brings it back as the reply), in a few sessions.
    for (const [i, s] of SECRET_CORPUS.entries()) {
      const headers: Record<string, string> = { "x-request-note": "corpus" };
      // Headers: the secret where a client might put one (a header cannot hold a line break).
      if (!s.secret.includes("\n")) {
        headers["x-api-key"] = s.secret;
        headers.cookie = `sid=${s.secret}`;
      }
      const res = await api(
        "/api/chat",
        postJson({ message: s.text, sender: "alice", session_id: `admin-s${i % SESSIONS}` }, headers),
      );
      responses.push(await res.text());
      expect(res.status).toBe(200);
    }
    // The OpenAI-compatible API.
    for (const s of SECRET_CORPUS.slice(0, 8)) {
      const res = await api(
        "/v1/chat/completions",
        postJson({ model: "main", messages: [{ role: "user", content: s.text }] }),
      );
      responses.push(await res.text());
      expect(res.status).toBe(200);
    }
    // Tool names and arguments, as a runtime reports them (alice is no admin, so no tool runs in the turn).
    const tools = await api(
      "/api/chat",
      postJson({ message: "please call tools", sender: "alice", session_id: "admin-s0" }),
    );
    expect(tools.status).toBe(200);
    // A provider error that echoes keys: a TURN_FAILED note, a needs-attention mark, an error log line.
    const failed = await api("/api/chat", postJson({ message: "please fail", session_id: "admin-s1" }));
    responses.push(await failed.text());
    expect(failed.status).toBeGreaterThanOrEqual(400);
    // A secret in a path, which the request log names.
    const missing = await api(`/api/nowhere/${sample("GitHub classic token").secret}`);
    expect(missing.status).toBe(404);
    await gateway.close();
  }, 120_000);

  afterAll(async () => {
    await upstream.close();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(logDir, { recursive: true, force: true });
    delete process.env[KEY_ENV];
  });

  it("stores the turns, with the secrets scrubbed", () => {
    const files = filesUnder(dataDir);
    const all = files.map((f) => readFileSync(f, "latin1")).join("\n");
    // Compaction summaries and titles were written from the same history.
    expect(all).toContain("Offline extractive summary");
    expect(all).toContain('"title"');
    expect(all).toContain("[redacted]");
    expect(all).toContain("TURN_FAILED");
    expect(all).toContain("lookup_[redacted]");
    if (backend === "sqlite") expect(files.some((f) => f.endsWith("runtime-sessions.db"))).toBe(true);
  });

  it("finds none of the corpus in any file of the data dir, or in its names", () => {
    const leaks = filesUnder(dataDir).flatMap((file) => [
      ...leaksIn(`${relative(dataDir, file)} (name)`, relative(dataDir, file), true),
      ...leaksIn(relative(dataDir, file), readFileSync(file, "latin1")),
    ]);
    expect(leaks).toEqual([]);
  });

  it("finds none in the gateway's log", () => {
    const log = readFileSync(logFile, "utf8");
    expect(log).toContain('"msg":"request failed"');
    expect(log).toContain("/api/nowhere/");
    expect(leaksIn("log", log)).toEqual([]);
  });

  it("replays history to the model with the secrets scrubbed", () => {
    // What the model is sent as the conversation; a tool loop's calls and results within one turn are the
    // model's own words, not history.
    const history = upstream.chatRequests().flatMap((b) => b.messages.filter((m) => m.role !== "tool"));
    const bodies = JSON.stringify(history.map((m) => m.content));
    expect(bodies).toContain("[redacted]");
    expect(leaksIn("requests to the model", bodies)).toEqual([]);
  });

  it("answers clients without the provider's keys", () => {
    const joined = responses.join("\n");
    expect(joined).toContain("TURN_FAILED");
    expect(leaksIn("responses", joined)).toEqual([]);
  });
});
