import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAKE_CLAUDE, useFakeCliState } from "../../support/fake-clis.js";
import { postJson, startTestGateway, type TestGateway } from "./helpers.js";

useFakeCliState("FAKE_CLAUDE_STATE");

let gw: TestGateway;
const cwd = mkdtempSync(join(tmpdir(), "sessiond-agent-"));

beforeAll(async () => {
  gw = await startTestGateway({
    agents: ["dev", "ops"],
    defaultAgent: "dev",
    agentOptions: {
      dev: { runtime: "claude-code", executable: FAKE_CLAUDE, cwd, model: "sonnet" },
      ops: { runtime: "echo" },
    },
  });
});
afterAll(async () => {
  await gw.stop();
});

interface SessionDetail {
  runtimeSessions: Array<{ agent: string; runtime: string; id: string; shortId: string; savedAt: number }>;
  cost: {
    usd: number;
    pricedRuns: number;
    unpricedRuns: number;
    ambiguousRuns: number;
    notMeasuredRuns: number;
  };
  needsAttention: boolean;
}

async function chat(user: string, message: string, agent = "dev") {
  const res = await gw.api(`/api/app/${user}`, postJson({ message, agent }));
  return { status: res.status, body: (await res.json()) as unknown as { key: string; reply: string } };
}

describe("runtime sessions, cost and agents over HTTP", () => {
  it("shows each agent's runtime session, the conversation's cost and whether it needs attention", async () => {
    const { key } = (await chat("bob", "hello")).body;
    await chat("bob", "hello", "ops");
    const detail = (await (
      await gw.api(`/api/sessions/${encodeURIComponent(key)}`)
    ).json()) as unknown as SessionDetail;
    expect(detail.runtimeSessions).toEqual([
      {
        agent: "dev",
        runtime: "claude-code",
        id: expect.any(String),
        shortId: expect.any(String),
        savedAt: expect.any(Number),
      },
    ]);
    expect(detail.runtimeSessions[0]?.shortId).toBe(detail.runtimeSessions[0]?.id.slice(0, 8));
    // ops (echo) answered in the same conversation: an offline echo costs nothing, so its run is not in the ledger.
    expect(detail.cost).toEqual({
      usd: 1,
      pricedRuns: 1,
      unpricedRuns: 0,
      ambiguousRuns: 0,
      notMeasuredRuns: 0,
    });
    expect(detail.needsAttention).toBe(false);
  });

  it("lists agents with their runtime, settings and cost totals", async () => {
    const body = (await (await gw.api("/api/agents")).json()) as unknown as {
      agents: Array<{
        name: string;
        runtime: string;
        cwd?: string;
        model?: string;
        cost: SessionDetail["cost"];
      }>;
    };
    expect(body.agents.map((a) => [a.name, a.runtime, a.cwd, a.model])).toEqual([
      ["dev", "claude-code", cwd, "sonnet"],
      ["ops", "echo", undefined, undefined],
    ]);
    expect(body.agents[0]?.cost.pricedRuns).toBeGreaterThanOrEqual(1);
    expect(body.agents[1]?.cost).toEqual({
      usd: 0,
      pricedRuns: 0,
      unpricedRuns: 0,
      ambiguousRuns: 0,
      notMeasuredRuns: 0,
    });
  });

  it("marks a conversation whose run failed, in its detail and in the list", async () => {
    const { key } = (await chat("carol", "hi")).body;
    await gw.engine.agents.store.save({
      agent: "dev",
      key,
      runtime: "claude-code",
      id: "missing-1",
      savedAt: 1,
    });
    expect((await chat("carol", "again")).status).toBe(502);
    const detail = (await (
      await gw.api(`/api/sessions/${encodeURIComponent(key)}`)
    ).json()) as unknown as SessionDetail;
    expect(detail.needsAttention).toBe(true);
    expect(detail.runtimeSessions[0]?.id).toBe("missing-1");
    const list = (await (await gw.api("/api/sessions")).json()) as unknown as {
      sessions: Array<{ key: string; needsAttention?: boolean }>;
    };
    expect(list.sessions.filter((s) => s.needsAttention).map((s) => s.key)).toEqual([key]);
  });

  it("edits an agent: a new working directory clears its sessions and answers with the notice", async () => {
    const kept = await gw.api("/api/agents/dev", {
      ...postJson({ instructions: "Be brief." }),
      method: "PATCH",
    });
    expect(await kept.json()).toMatchObject({ cleared: 0, agent: { instructions: "Be brief." } });
    const elsewhere = mkdtempSync(join(tmpdir(), "sessiond-moved-"));
    const res = await gw.api("/api/agents/dev", { ...postJson({ cwd: elsewhere }), method: "PATCH" });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      cleared: 2,
      notice: "Agent moved: New working directory. 2 saved sessions cleared, so the next run starts fresh.",
      agent: { name: "dev", cwd: elsewhere },
    });
  });

  it("duplicates and deletes agents; bad edits and unknown agents get typed errors", async () => {
    const copy = await gw.api("/api/agents/dev/duplicate", postJson({ name: "dev-copy" }));
    expect(copy.status).toBe(201);
    expect(await copy.json()).toMatchObject({
      agent: { name: "dev-copy", runtime: "claude-code", model: "sonnet" },
    });
    const bad = await gw.api("/api/agents/dev", { ...postJson({ password: "x" }), method: "PATCH" });
    expect(bad.status).toBe(400);
    const badCwd = await gw.api("/api/agents/dev", { ...postJson({ cwd: "" }), method: "PATCH" });
    expect((await badCwd.json()).error.code).toBe("INVALID_ARGUMENT");
    // A program to run is not the API's to set: only sessiond.yaml and the local CLI name one.
    const exec = await gw.api("/api/agents/dev", { ...postJson({ executable: "/bin/sh" }), method: "PATCH" });
    expect(exec.status).toBe(400);
    expect((await (await gw.api("/api/agents/dev")).json()) as unknown).toMatchObject({
      agent: { executable: FAKE_CLAUDE },
    });
    expect((await gw.api("/api/agents/dev-copy", { method: "DELETE" })).status).toBe(200);
    const gone = await gw.api("/api/agents/dev-copy");
    expect(gone.status).toBe(404);
    expect((await gone.json()).error.code).toBe("AGENT_NOT_FOUND");
  });
});
