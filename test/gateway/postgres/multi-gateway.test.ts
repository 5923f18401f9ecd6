import { describe, expect, it } from "vitest";
import { PostgresStore } from "../../../src/store/postgres/postgres-store.js";
import type { ChatHandler } from "../../support/openai-server.js";
import { connectWs, multiGatewaySuite, queryDb, within } from "./gateways.js";

const suite = multiGatewaySuite();

// Each test starts its own processes on a loaded machine: a generous bound, and bounded waits inside it
// that name what they waited for.
const MULTI_PROCESS_MS = 300_000;
const WAIT_MS = 120_000;

const lastUser = (body: Parameters<ChatHandler>[0]) => {
  const last = [...body.messages].reverse().find((m) => m.role === "user");
  return typeof last?.content === "string" ? last.content : "";
};

/** Started within a bound, so a gateway that cannot start fails the test saying so. */
function gatewaysOn(count: number, leaseTtlMs: number) {
  return within(WAIT_MS, `${count} gateways to start`, suite.gatewaysOn(count, leaseTtlMs));
}

async function storedMessages(url: string, key: string): Promise<Array<{ role: string; content: string }>> {
  const store = await PostgresStore.open({ url });
  try {
    const session = (await store.getSession(key))!;
    const entries = await store.readEntries(session.id);
    expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1));
    return entries.flatMap((e) => (e.type === "message" ? [{ role: e.role, content: e.content }] : []));
  } finally {
    await store.close();
  }
}

describe("several sessiond serve processes on one PostgreSQL database", () => {
  it(
    "run 60 concurrent turns on one key spread over three gateways one at a time, FIFO per gateway, none lost",
    async () => {
      const [url, three] = await gatewaysOn(3, 10_000);
      let running = 0;
      let maxRunning = 0;
      const seen: string[] = [];
      suite.model.setHandler(async (body) => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        seen.push(lastUser(body));
        // A model that takes a moment: long enough for a second turn to arrive if the lease let it.
        await new Promise((resolve) => setTimeout(resolve, 5));
        running--;
        return { content: `echo: ${lastUser(body)}` };
      });
      // Each gateway gets its 20 on one WebSocket, so they arrive in the order sent.
      const clients = await Promise.all(three.map(connectWs));
      const answers = await within(
        WAIT_MS * 2,
        () => `60 turns to be answered (${seen.length} reached the model)`,
        Promise.all(
          clients.flatMap((ws, g) =>
            Array.from({ length: 20 }, (_, i) =>
              ws.request("chat.send", { message: `g${g}:${i}`, session: "admin-shared" }),
            ),
          ),
        ),
      );
      suite.model.setHandler(async (body) => ({ content: `echo: ${lastUser(body)}` }));
      for (const ws of clients) ws.close();
      expect(answers.every((a) => a.ok)).toBe(true);
      expect(seen).toHaveLength(60);
      for (let g = 0; g < 3; g++) {
        // The model sees `[sender] g1:3` (several senders share the session).
        const order = seen.flatMap((s) => {
          const match = /g(\d):(\d+)$/.exec(s);
          return match && Number(match[1]) === g ? [Number(match[2])] : [];
        });
        expect(order).toEqual(Array.from({ length: 20 }, (_, i) => i));
      }
      const messages = await storedMessages(url, "admin-shared");
      expect(messages.filter((m) => m.role === "user")).toHaveLength(60);
      expect(messages.filter((m) => m.role === "assistant")).toHaveLength(60);
      // Each reply follows its own input: no two turns interleaved in the log.
      for (let i = 0; i < messages.length; i += 2) {
        expect(messages[i + 1]!.content.endsWith(messages[i]!.content)).toBe(true);
      }
      expect(maxRunning).toBe(1);
    },
    MULTI_PROCESS_MS,
  );

  it(
    "hand the key to another gateway after the TTL when the holder is killed mid-turn",
    async () => {
      const [url, [a, b]] = await gatewaysOn(2, 1500);
      let arrived!: () => void;
      const atModel = new Promise<void>((resolve) => {
        arrived = resolve;
      });
      suite.model.setHandler(async (body) => {
        if (lastUser(body).endsWith("hang")) {
          arrived();
          await new Promise(() => {}); // the holder dies before any answer
        }
        return { content: `echo: ${lastUser(body)}` };
      });
      void a!.chat("admin-crash", "hang").catch(() => {});
      await within(WAIT_MS, "a's turn to reach the model", atModel);
      a!.child.kill("SIGKILL");
      const next = await within(WAIT_MS, "b's turn after a's lease lapsed", b!.chat("admin-crash", "after"));
      expect(next.status).toBe(200);
      expect(String(next.body.reply)).toMatch(/after$/);
      const messages = await storedMessages(url, "admin-crash");
      expect(messages.map((m) => m.role)).toEqual(["user", "user", "assistant"]);
      expect(messages[0]!.content).toBe("hang");
      // b took a's input over once a's heartbeat lapsed: cut off mid-turn, so marked interrupted, not run again.
      await expect
        .poll(
          async () =>
            (
              await queryDb<{ state: string }>(
                url,
                "SELECT state FROM inbox WHERE envelope->>'text' = 'hang'",
              )
            )[0]?.state,
          { timeout: WAIT_MS, interval: 200 },
        )
        .toBe("interrupted");
    },
    MULTI_PROCESS_MS,
  );

  it(
    "refuse every write of a holder paused past its lease (SIGSTOP) once another took over: LEASE_LOST, nothing stored",
    async () => {
      const [url, [a, b]] = await gatewaysOn(2, 1500);
      let arrived!: () => void;
      const atModel = new Promise<void>((resolve) => {
        arrived = resolve;
      });
      let answer!: () => void;
      const answered = new Promise<void>((resolve) => {
        answer = resolve;
      });
      suite.model.setHandler(async (body) => {
        if (lastUser(body).endsWith("pause")) {
          arrived();
          await answered;
        }
        return { content: `echo: ${lastUser(body)}` };
      });
      const paused = a!.chat("admin-pause", "pause");
      await within(WAIT_MS, "a's turn to reach the model", atModel);
      a!.child.kill("SIGSTOP");
      // b waits for the lease to lapse (a cannot renew it), takes it over and runs its turn.
      const takeover = await within(
        WAIT_MS,
        "b's turn after a's lease lapsed",
        b!.chat("admin-pause", "takeover"),
      );
      expect(takeover.status).toBe(200);
      answer(); // the model's answer waits in a's socket
      a!.child.kill("SIGCONT");
      const late = await within(WAIT_MS, "a's answer once it runs again", paused);
      // A clear conflict, not a 500: the session is served by the gateway that took it over.
      expect(late.status).toBe(409);
      expect(JSON.stringify(late.body)).toContain("LEASE_LOST");
      const messages = await storedMessages(url, "admin-pause");
      // a's input (stored while it held the lease), then b's turn; nothing of a's after the takeover.
      expect(messages.map((m) => m.content.replace(/^.*\] /, ""))).toEqual([
        "pause",
        "takeover",
        expect.stringMatching(/takeover$/),
      ]);
    },
    MULTI_PROCESS_MS,
  );

  it(
    "show a turn made on one gateway to a WebSocket subscriber of another",
    async () => {
      const [, [a, b]] = await gatewaysOn(2, 10_000);
      suite.model.setHandler(async (body) => ({ content: `echo: ${lastUser(body)}` }));
      const watcher = await connectWs(b!);
      expect((await watcher.request("sessions.subscribe", { session: "admin-live" })).ok).toBe(true);
      const seenReply = watcher.event((name, data) => {
        const entries = (data as { entries?: Array<{ role?: string; content?: string }> }).entries ?? [];
        return (
          name === "session.appended" &&
          entries.some((e) => e.role === "assistant" && e.content === "echo: seen on b")
        );
      });
      expect((await a!.chat("admin-live", "seen on b")).status).toBe(200);
      await within(WAIT_MS, "b's subscriber to see a's reply", seenReply);
      watcher.close();
    },
    MULTI_PROCESS_MS,
  );
});
