import { randomBytes } from "node:crypto";
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { filesHolding, uniqueWord } from "../erasure/byte-scan.js";
import { startHeldModel, writeModelConfig } from "../support/held-model.js";
import { type ServedGateway, serveGateway } from "../support/serve-child.js";

const TOKEN = "encryption-serve-token-0123456789";
const auth = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };

/** The gateway's exit code and output, for one that must refuse to start. */
async function refused(served: ServedGateway): Promise<{ code: number | null; text: string }> {
  const code = await new Promise<number | null>((resolve) => served.child.once("exit", resolve));
  return { code, text: served.output.text };
}

describe("serve with store.encryption", () => {
  it("keeps no byte of a conversation in the data dir, reads it back, and refuses a missing or wrong key", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sessiond-sealed-serve-"));
    const model = await startHeldModel();
    model.answerAtOnce();
    const running: ServedGateway[] = [];
    try {
      writeModelConfig(dir, model.server);
      appendFileSync(join(dir, "sessiond.yaml"), "store: { encryption: { key_env: SESSIOND_STORE_KEY } }\n");
      const key = randomBytes(32).toString("base64");
      const word = uniqueWord("private");

      const served = serveGateway(dir, TOKEN, [], { SESSIOND_STORE_KEY: key });
      running.push(served);
      const url = await served.listening();
      const response = await fetch(`${url}/api/chat`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({ message: `my code word is ${word}`, session_id: "admin-sealed" }),
      });
      if (response.status !== 200) throw new Error(await response.text());
      const { key: sessionKey } = (await response.json()) as { key: string };
      // The store's file, its WAL, the inbox table, and every other file of the data dir, while it runs.
      expect(filesHolding(dir, word)).toEqual([]);
      const history = (await (
        await fetch(`${url}/api/sessions/${encodeURIComponent(sessionKey)}/history`, { headers: auth })
      ).json()) as { entries: Array<{ role?: string; content?: string }> };
      expect(history.entries.filter((e) => e.role).map((e) => e.content)).toEqual([
        `my code word is ${word}`,
        `echo: my code word is ${word}`,
      ]);
      const search = await fetch(`${url}/api/search?q=${word}`, { headers: auth });
      expect(((await search.json()) as { error?: { code?: string } }).error?.code).toBe("SEARCH_UNAVAILABLE");
      served.child.kill("SIGTERM");
      await new Promise((r) => served.child.once("exit", r));
      expect(filesHolding(dir, word)).toEqual([]);

      for (const [env, expected] of [
        [{}, /CONFIG_INVALID.*SESSIOND_STORE_KEY.*not set/],
        [{ SESSIOND_STORE_KEY: "c2hvcnQ=" }, /CONFIG_INVALID.*SESSIOND_STORE_KEY must hold 32 bytes/],
        [{ SESSIOND_STORE_KEY: randomBytes(32).toString("base64") }, /STORE_CORRUPT.*another key/],
      ] as const) {
        const again = serveGateway(dir, TOKEN, [], { SESSIOND_STORE_KEY: "", ...env });
        running.push(again);
        const { code, text } = await refused(again);
        expect(code).not.toBe(0);
        expect(text).toMatch(expected);
        expect(text).not.toMatch(/in-memory store/);
        if ("SESSIOND_STORE_KEY" in env) expect(text).not.toContain(env.SESSIOND_STORE_KEY);
      }
    } finally {
      for (const s of running) s.kill();
      await model.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
