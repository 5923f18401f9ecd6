import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as sdk from "@opentelemetry/sdk-trace";
import { describe, expect, it } from "vitest";
import { batchOptions, resourceAttributes, samplerFrom } from "../../src/tracing/sdk-env.js";
import { type ChatRequestBody, startOpenAiServer } from "../support/openai-server.js";
import { serveGateway } from "../support/serve-child.js";
import { startOtlpReceiver } from "./otlp-receiver.js";

const TOKEN = "otel-sdk-env-token-0123456789abcdef";
const CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";

const codeOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (error) {
    return `${(error as { code?: string }).code}: ${(error as Error).message}`;
  }
  return "no error";
};

describe("the trace SDK's own OTEL_* variables (read by sessiond: sdk-trace 3 reads none)", () => {
  it("OTEL_BSP_*: delay, timeout, queue and batch sizes; a batch over the queue is capped at it", () => {
    expect(batchOptions({})).toEqual({});
    expect(
      batchOptions({
        OTEL_BSP_SCHEDULE_DELAY: "50",
        OTEL_BSP_EXPORT_TIMEOUT: "1000",
        OTEL_BSP_MAX_QUEUE_SIZE: "100",
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "500",
      }),
    ).toEqual({
      scheduledDelayMillis: 50,
      exportTimeoutMillis: 1000,
      maxQueueSize: 100,
      maxExportBatchSize: 100,
    });
    expect(codeOf(() => batchOptions({ OTEL_BSP_SCHEDULE_DELAY: "soon" }))).toBe(
      'INVALID_ARGUMENT: OTEL_BSP_SCHEDULE_DELAY="soon": expected an integer of at least 0',
    );
    expect(codeOf(() => batchOptions({ OTEL_BSP_MAX_QUEUE_SIZE: "0" }))).toMatch(/^INVALID_ARGUMENT/);
  });

  it("OTEL_TRACES_SAMPLER and its ratio; default parent-based always on", () => {
    const described = (env: Record<string, string>) => samplerFrom(sdk, env).toString();
    expect(described({})).toBe(new sdk.ParentBasedSampler({ root: new sdk.AlwaysOnSampler() }).toString());
    expect(described({ OTEL_TRACES_SAMPLER: "always_off" })).toBe("AlwaysOffSampler");
    expect(described({ OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.25" })).toBe(
      "TraceIdRatioBased{0.25}",
    );
    expect(described({ OTEL_TRACES_SAMPLER: "parentbased_traceidratio" })).toContain("TraceIdRatioBased{1}");
    expect(codeOf(() => samplerFrom(sdk, { OTEL_TRACES_SAMPLER: "jaeger_remote" }))).toMatch(
      /^INVALID_ARGUMENT: OTEL_TRACES_SAMPLER="jaeger_remote": expected one of always_on, /,
    );
    expect(
      codeOf(() => samplerFrom(sdk, { OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "2" })),
    ).toMatch(/^INVALID_ARGUMENT: OTEL_TRACES_SAMPLER_ARG="2"/);
  });

  it("OTEL_RESOURCE_ATTRIBUTES, percent-decoded; OTEL_SERVICE_NAME wins for service.name", () => {
    expect(resourceAttributes({})).toEqual({ "service.name": "sessiond" });
    expect(
      resourceAttributes({
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=prod, team=a%2Cb ,service.name=from-attrs",
      }),
    ).toEqual({ "deployment.environment": "prod", team: "a,b", "service.name": "from-attrs" });
    expect(
      resourceAttributes({ OTEL_RESOURCE_ATTRIBUTES: "service.name=from-attrs", OTEL_SERVICE_NAME: "svc" }),
    ).toEqual({ "service.name": "svc" });
    expect(codeOf(() => resourceAttributes({ OTEL_RESOURCE_ATTRIBUTES: "novalue" }))).toMatch(
      /^INVALID_ARGUMENT: OTEL_RESOURCE_ATTRIBUTES="novalue"/,
    );
  });

  it("serve honours them: parentbased_always_off exports only the caller's sampled trace, and says so downstream", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-otel-sdk-env-"));
    const receiver = await startOtlpReceiver();
    const llm = await startOpenAiServer();
    const served = serveGateway(dir, TOKEN, [], {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.origin,
      OTEL_TRACES_SAMPLER: "parentbased_always_off",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=test",
    });
    try {
      writeFileSync(
        join(dir, "sessiond.yaml"),
        `models: { local: { provider: openai, base_url: "${llm.baseUrl}", model: m } }\nagents: [{ id: main, model: local }]\ntitles: { enabled: false }\n`,
      );
      const url = await served.listening();
      const chat = async (headers: Record<string, string>) => {
        const res = await fetch(`${url}/api/chat`, {
          method: "POST",
          headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json", ...headers },
          body: JSON.stringify({ message: "hi", sender: "alice", session_id: "admin-sampled" }),
        });
        expect(res.status).toBe(200);
      };
      await chat({ traceparent: `00-${CALLER_TRACE}-${CALLER_SPAN}-01` });
      await chat({});
      const exited = new Promise((r) => served.child.once("exit", r));
      served.child.kill("SIGTERM");
      await exited;

      expect(receiver.spans.map((s) => [s.name, s.traceId])).toEqual([
        ["chat m", CALLER_TRACE],
        ["invoke_agent main", CALLER_TRACE],
      ]);
      expect(receiver.spans[0]?.resource).toMatchObject({
        "deployment.environment": "test",
        "service.name": "sessiond",
      });
      // The unsampled turn still carries a traceparent, flagged not sampled.
      const streamed = llm.requests.filter((r) => (r.body as ChatRequestBody).stream);
      expect(streamed.map((r) => r.headers.traceparent?.slice(-2))).toEqual(["01", "00"]);
    } finally {
      served.kill();
      await llm.close();
      await receiver.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
