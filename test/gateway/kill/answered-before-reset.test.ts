import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checkStore } from "../../../bench/kill-trials/check.js";
import {
  startTrialGateway,
  storeConfigOf,
  type TrialData,
  type TrialGateway,
  writeTrialConfig,
} from "../../../bench/kill-trials/gateway.js";
import { type EchoModel, startEchoModel } from "../../../bench/kill-trials/model.js";
import type { Envelope } from "../../../src/model/envelope.js";
import { newId } from "../../../src/model/ids.js";
import type { SessionInit } from "../../../src/model/session.js";
import { openStore } from "../../../src/store/open.js";
import { admissionOf, admittedEnvelope } from "../../../src/turns/admission.js";
import { openInbox } from "../../../src/turns/open-inbox.js";
import { inputEntry } from "../../../src/turns/turn-entries.js";

const CLI = resolve("dist/bundle/main.js");
const TOKEN = "answered-before-reset-token-0123456789";
const KEY = "openai-compat:127.0.0.1";
const INIT: SessionInit = { agent: "main", channel: "openai", chatType: "direct", createdBy: "127.0.0.1" };

/** What `POST /v1/chat/completions` from 127.0.0.1 without a session name admits. */
function openAiInput(text: string, history: Envelope["clientHistory"]): Envelope {
  return {
    agent: "main",
    channel: "openai",
    chat: { type: "direct", id: "127.0.0.1" },
    sender: { id: "127.0.0.1" },
    text,
    entryPoint: { kind: "openai_compat", clientIp: "127.0.0.1" },
    clientHistory: history,
  };
}

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("recovery after a SIGKILL on JSONL, on the OpenAI-compatible key", () => {
  it("marks done an input answered in an earlier generation whose done mark was lost, and never runs it again", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-answered-reset-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const data: TrialData = { dir, store: "jsonl" };
    const config = storeConfigOf(data);

    // The state the SIGKILL trials left (issue 29): two clients share the key of their address. Client A's
    // input was answered in generation 1; client B's history did not continue it, so B's turn started
    // generation 2 and was answered too. B's done mark reached the disk, A's did not (the JSONL inbox
    // wrote it on its own, behind other inputs' admissions, while the key's next turn ran).
    const store = await openStore(config);
    const inbox = await openInbox(undefined, store, config);
    if (!inbox) throw new Error("the JSONL store has an inbox");
    const start = Date.now() - 10_000;
    const turn = async (id: string, envelope: Envelope, at: number) => {
      expect((await inbox.admit(admissionOf(id, KEY, envelope, at))).admitted).toBe(true);
      const input = { ...inputEntry(admittedEnvelope(id, envelope), envelope.text), ts: at + 1 };
      const stored = (await store.append(KEY, [input], { init: INIT })).entries[0];
      if (!stored) throw new Error("the input was not stored");
      const reply = (
        await store.append(KEY, [
          {
            type: "message",
            role: "assistant",
            content: `echo: ${envelope.text}`,
            sender: { id: "main" },
            replyTo: stored.id,
            idempotencyKey: `turn:${stored.id}:reply`,
            ts: at + 2,
          },
        ])
      ).entries[0];
      return { sessionId: stored.sessionId, replyId: reply?.id ?? "" };
    };
    const a = newId(start);
    await turn(a, openAiInput("from A", []), start);
    const b = newId(start + 100);
    await store.reset(KEY, "client", INIT);
    const answeredB = await turn(b, openAiInput("from B", []), start + 100);
    expect(await inbox.transition(b, "done", start + 200, answeredB)).toBe(true);
    await inbox.close();
    await store.close();

    const model: EchoModel = await startEchoModel(0);
    cleanups.push(() => model.close());
    writeTrialConfig(data, model.baseUrl);
    const gateway: TrialGateway = await startTrialGateway(CLI, data, TOKEN);
    cleanups.push(() => gateway.kill());
    expect(gateway.output()).toContain("recovered inputs: 0 queued again, 1 already answered, 0 interrupted");
    const status = await fetch(`${gateway.url}/api/turns/${a}`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(await status.json()).toMatchObject({ state: "done" });
    await gateway.stop();

    expect(model.answered()).toBe(0);
    const sent = ["from A", "from B"].map((text) => ({
      driver: "openai" as const,
      client: "",
      life: 1,
      text,
      acked: true,
      status: 200 as const,
    }));
    const check = await checkStore(config, sent);
    expect(check.doubles).toEqual([]);
    expect(check.drivers.openai).toMatchObject({ acked: 2, ackedOnce: 2 });
    expect(check.sessions).toBe(2);
  });
});
