import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type ChannelGateway, startChannelGateway } from "./support.js";

const env = { WA_TOKEN: "wa-access-token", WA_SECRET: "wa-app-secret", WA_VERIFY: "verify-me" };

// With the dashboard served (as `sessiond serve` does), its static handler must not answer channel paths.
describe("channel routes beside the dashboard", () => {
  let gw: ChannelGateway;
  let webDir: string;

  beforeEach(async () => {
    webDir = mkdtempSync(join(tmpdir(), "sessiond-web-"));
    writeFileSync(join(webDir, "index.html"), "<!doctype html><title>dashboard</title>");
    gw = await startChannelGateway(
      {
        whatsapp: { token_env: "WA_TOKEN", app_secret_env: "WA_SECRET", verify_token_env: "WA_VERIFY" },
        telegram: { token_env: "TG_TOKEN", secret_env: "TG_SECRET", username: "bot" },
      },
      { ...env, TG_TOKEN: "42:tg", TG_SECRET: "tg-secret" },
      {},
      { webDir },
    );
  });
  afterEach(async () => {
    await gw.stop();
    rmSync(webDir, { recursive: true, force: true });
  });

  it("answers WhatsApp's hub.challenge with the challenge, and a wrong verify token with 403", async () => {
    const ok = await fetch(
      gw.at("/channels/whatsapp?hub.mode=subscribe&hub.verify_token=verify-me&hub.challenge=1158201444"),
    );
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe("1158201444");
    const bad = await fetch(
      gw.at("/channels/whatsapp?hub.mode=subscribe&hub.verify_token=nope&hub.challenge=1158201444"),
    );
    expect(bad.status).toBe(403);
    expect(await bad.text()).not.toContain("dashboard");
  });

  it("a GET on a POST-only channel path is not the dashboard's page", async () => {
    const res = await fetch(gw.at("/channels/telegram"));
    expect(res.status).not.toBe(200);
    expect(await res.text()).not.toContain("dashboard");
    // The dashboard itself is still served.
    expect(await (await fetch(gw.at("/sessions"))).text()).toContain("dashboard");
  });
});
