import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SKIPPED_BY_STEER } from "../../../src/runtimes/tool-round.js";
import { type ChatRequestBody, type ChatResponse, startOpenAiServer } from "../../support/openai-server.js";
import { openAiToolRule } from "../../support/provider-rules.js";
import { servedGateways } from "../../support/serve-child.js";

const TOKEN = "steer-crash-token-0123456789abcdef";
const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
const { serve, cleanups } = servedGateways(TOKEN);

/** The user messages of a request (consecutive unanswered ones may come merged into one: split again). */
function users(body: ChatRequestBody): string[] {
  return body.messages.filter((m) => m.role === "user").flatMap((m) => String(m.content).split("\n\n"));
}

function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe("steer across a SIGKILL", () => {
  it("an input a running turn took at its tool boundary is not run again after a restart", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-steer-crash-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const requests: ChatRequestBody[] = [];
    const firstAsked = deferred();
    const firstAnswer = deferred<ChatResponse>();
    const secondAsked = deferred();
    const held: Array<(reply: ChatResponse) => void> = [];
    // First life: the model is held on m1 while m2 arrives; released, it calls a tool, which the waiting
    // steer skips; the next call, carrying m2, is held until the kill.
    const model = await startOpenAiServer((body) => {
      requests.push(body);
      const broken = openAiToolRule(body.messages);
      if (broken) return { status: 400, body: { error: { message: broken, type: "invalid_request_error" } } };
      if (requests.length === 1) {
        firstAsked.resolve();
        return firstAnswer.promise;
      }
      secondAsked.resolve();
      return new Promise<ChatResponse>((r) => held.push(r));
    });
    cleanups.push(async () => {
      firstAnswer.resolve({ status: 500 });
      for (const release of held) release({ status: 500 });
      await model.close();
    });
    writeFileSync(
      join(dir, "sessiond.yaml"),
      [
        `models: { local: { provider: openai, base_url: "${model.baseUrl}", model: test-model } }`,
        "agents: [{ id: main, model: local, queue: { mode: steer, debounce_ms: 0 } }]",
        "titles: { enabled: false }",
        "",
      ].join("\n"),
    );

    const a = serve(dir);
    const urlA = await a.listening();
    const post = async (url: string, message: string, async: boolean) =>
      fetch(`${url}/api/chat${async ? "?async=1" : ""}`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ message, session_id: "admin-steer-crash" }),
      });
    const accepted = await post(urlA, "m1", true);
    expect(accepted.status).toBe(202);
    const first = (await accepted.json()) as { id: string; key: string };
    await firstAsked.promise;
    const second = await post(urlA, "m2", true);
    expect(second.status).toBe(202);
    const steer = (await second.json()) as { id: string };
    const inspect = async () =>
      (await (await fetch(`${urlA}/api/inspect`, { headers: auth })).json()) as {
        queued: Array<{ id: string; preview: string; mode: string }>;
      };
    // Admitted and shown as a queued steer until the running turn takes it.
    expect((await inspect()).queued).toEqual([
      expect.objectContaining({ id: steer.id, preview: "m2", mode: "steer" }),
    ]);

    firstAnswer.resolve({ toolCalls: [{ id: "call_1", name: "sessions_list", arguments: "{}" }] });
    await secondAsked.promise;
    expect(users(requests[1] as ChatRequestBody)).toEqual(["m1", "m2"]);
    // m2 waited before the model's only call: that call was skipped, closed with its paired result.
    expect((requests[1] as ChatRequestBody).messages.slice(-2)).toEqual([
      { role: "tool", tool_call_id: "call_1", content: SKIPPED_BY_STEER },
      { role: "user", content: "m2" },
    ]);
    expect((await inspect()).queued).toEqual([]);
    const running = (await (await fetch(`${urlA}/api/turns/${steer.id}`, { headers: auth })).json()) as {
      state: string;
    };
    expect(running.state).toBe("running");

    const killed = new Promise((r) => a.child.once("exit", r));
    a.child.kill("SIGKILL");
    await killed;

    // Second life: the model answers at once. Both inputs are stored without a reply: cut off, not rerun.
    model.setHandler((body) => {
      requests.push(body);
      return { content: `echo: ${users(body).at(-1)}` };
    });
    const b = serve(dir);
    const urlB = await b.listening();
    expect(b.output.text).toContain("recovered inputs: 0 queued again, 0 already answered, 2 interrupted");
    const after = await post(urlB, "m3", false);
    expect(after.status).toBe(200);
    // Only m3 was asked after the restart: m2 never ran as a turn of its own.
    expect(requests).toHaveLength(3);
    expect(users(requests[2] as ChatRequestBody).filter((text) => /^m\d$/.test(text))).toEqual([
      "m1",
      "m2",
      "m3",
    ]);

    const history = (await (
      await fetch(`${urlB}/api/sessions/${encodeURIComponent(first.key)}/history`, { headers: auth })
    ).json()) as { entries: Array<{ type: string; role?: string; content?: string; code?: string }> };
    expect(history.entries.filter((e) => e.role === "user").map((e) => e.content)).toEqual([
      "m1",
      "m2",
      "m3",
    ]);
    expect(history.entries.filter((e) => e.role === "assistant").map((e) => e.content)).toEqual(["echo: m3"]);
    expect(history.entries.filter((e) => e.code === "TURN_INTERRUPTED")).toHaveLength(2);
    for (const id of [first.id, steer.id]) {
      const status = (await (await fetch(`${urlB}/api/turns/${id}`, { headers: auth })).json()) as {
        state: string;
      };
      expect(status.state).toBe("interrupted");
    }
  });
});
