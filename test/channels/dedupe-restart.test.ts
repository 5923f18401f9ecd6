import { createHmac } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { SEEN_FILE } from "../../src/channels/seen/sqlite-seen.js";
import { type RecordedRequest, startLocalServer } from "../support/http-server.js";
import { type ServedGateway, serveGateway } from "../support/serve-child.js";
import { sendJson, whatsappNotification } from "./support.js";

const APP_SECRET = "wa-app-secret-restart";
const TOKEN = "gateway-token-dedupe";

const delivery = (id: string, text: string) => JSON.stringify(whatsappNotification(id, text));

describe("a signed WhatsApp delivery replayed after a reset and a restart", () => {
  const cleanup: Array<() => Promise<void> | void> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  it("runs its turn once: the replay is a duplicate, on the SQLite store, for good", async () => {
    const sent: RecordedRequest[] = [];
    let replied: (() => void) | undefined;
    const graph = await startLocalServer((request, res) => {
      sent.push(request);
      sendJson(res, 200, { messages: [{ id: `wamid.reply${sent.length}` }] });
      replied?.();
    });
    cleanup.push(() => graph.close());
    const dir = mkdtempSync(join(tmpdir(), "sessiond-dedupe-"));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, "wa-token"), "wa-access-token");
    writeFileSync(join(dir, "wa-secret"), APP_SECRET);
    writeFileSync(join(dir, "wa-verify"), "verify-me");
    writeFileSync(
      join(dir, "sessiond.yaml"),
      stringify({
        titles: { enabled: false },
        channels: {
          whatsapp: {
            token_file: "wa-token",
            app_secret_file: "wa-secret",
            verify_token_file: "wa-verify",
            api_base_url: graph.origin,
          },
        },
      }),
    );
    const body = delivery("wamid.HBgLreplayed", "run me once");
    const signature = `sha256=${createHmac("sha256", APP_SECRET).update(body).digest("hex")}`;
    const deliver = (url: string) =>
      fetch(`${url}/channels/whatsapp`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-hub-signature-256": signature },
        body,
      });
    const start = async (): Promise<[ServedGateway, string]> => {
      const served = serveGateway(dir, TOKEN);
      cleanup.push(() => served.kill());
      return [served, await served.listening()];
    };
    const stop = async (served: ServedGateway) => {
      const exited = new Promise((r) => served.child.once("exit", r));
      served.child.kill("SIGTERM");
      await exited;
    };

    const [first, url] = await start();
    const answered = new Promise<void>((r) => {
      replied = r;
    });
    expect((await deliver(url)).status).toBe(200);
    await answered;
    expect(sent).toHaveLength(1);
    // /new: the session starts over (its entries, with their idempotency keys, are archived).
    const reset = await fetch(`${url}/api/sessions/${encodeURIComponent("whatsapp:4915112345")}/reset`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(reset.status).toBe(200);
    expect((await deliver(url)).status).toBe(200);
    await stop(first);

    // A restart, then Meta's redelivery of the same signed message.
    const [second, url2] = await start();
    expect((await deliver(url2)).status).toBe(200);
    // Anything it would run goes through the lane; the session then shows what ran.
    const history = await fetch(`${url2}/api/sessions/${encodeURIComponent("whatsapp:4915112345")}/history`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const entries = ((await history.json()) as { entries: Array<{ type: string; role?: string }> }).entries;
    await stop(second);
    expect(entries.filter((e) => e.type === "message")).toEqual([]);
    expect(sent).toHaveLength(1);
    // Kept beside the store, in a file of its own.
    expect(existsSync(join(dir, SEEN_FILE))).toBe(true);
  });
});
