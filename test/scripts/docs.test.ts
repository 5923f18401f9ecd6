import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import WebSocket from "ws";
import { cliReference } from "../../scripts/docs/cli-reference.js";
import { generatedSections } from "../../scripts/docs/generate.js";
import { GENERATED_SECTIONS, SECTION_FILES, sectionOf } from "../../scripts/docs/readme-sections.js";
import { startTestGateway, type TestGateway, TOKEN } from "../gateway/http/helpers.js";

const pageOf = (name: (typeof GENERATED_SECTIONS)[number]) =>
  readFileSync(fileURLToPath(new URL(`../../${SECTION_FILES[name]}`, import.meta.url)), "utf8");

const current = await generatedSections();

interface ServedDocument {
  paths: Record<string, Record<string, unknown>>;
  "x-websocket": { methods: Record<string, unknown>; events: Record<string, string> };
}

/** The OpenAPI document a real gateway serves. */
async function served(gateway: TestGateway): Promise<ServedDocument> {
  return (await (await gateway.api("/api/openapi.json")).json()) as unknown as ServedDocument;
}

describe("the generated references (docs/reference/)", () => {
  for (const name of GENERATED_SECTIONS) {
    it(`the ${name} reference is what the code says (npm run docs rewrites it)`, () => {
      expect(sectionOf(pageOf(name), name)).toBe(current[name]);
    });
  }

  it("lists every command and option commander knows, so a new one shows up as drift", async () => {
    const reference = await cliReference();
    for (const usage of [
      "sessiond sessions list [options]",
      "sessiond serve [options]",
      "sessiond agents duplicate",
    ]) {
      expect(reference).toContain(usage);
    }
    expect(reference).toContain("--data-dir <dir>");
    expect(reference).not.toContain("--help");
  });

  it("lists every key of the config schema with its allowed values", () => {
    const { config } = current;
    expect(config).toContain("| `session.reset.mode` | off \\| daily \\| idle |");
    expect(config).toContain("| `store.commit_interval_ms` | integer ≥ 0 ≤ 1000 |");
    expect(config).toContain(
      "| `models.<name>.api_key_env` | string | The environment variable holding the key",
    );
  });

  it("the HTTP reference holds every operation, WebSocket method and event GET /api/openapi.json serves", async () => {
    const gateway = await startTestGateway();
    try {
      const document = await served(gateway);
      const page = pageOf("http");
      const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
        Object.keys(methods).map((method) => `### ${method.toUpperCase()} ${path}`),
      );
      expect(operations.length).toBeGreaterThan(20);
      for (const heading of operations) expect(page).toContain(`\n${heading}\n`);
      for (const method of Object.keys(document["x-websocket"].methods))
        expect(page).toContain(`| \`${method}\` |`);
      for (const event of Object.keys(document["x-websocket"].events))
        expect(page).toContain(`| \`${event}\` |`);
    } finally {
      await gateway.stop();
    }
  });

  it("every event a WebSocket client receives through a turn is one the reference lists", async () => {
    const gateway = await startTestGateway();
    const documented = Object.keys((await served(gateway))["x-websocket"].events);
    const ws = new WebSocket(`${gateway.url.replace("http", "ws")}/ws?token=${TOKEN}&channel=web`);
    const received: string[] = [];
    try {
      const replied = new Promise<void>((resolve) => {
        ws.on("message", (raw) => {
          const frame = JSON.parse(raw.toString()) as { type: string; id?: string; event?: string };
          if (frame.type === "event") received.push(frame.event as string);
          if (frame.type === "res" && frame.id === "2") resolve();
        });
      });
      await new Promise((resolve, reject) => {
        ws.once("open", resolve);
        ws.once("error", reject);
      });
      const send = (id: string, method: string, params: Record<string, unknown>) =>
        ws.send(JSON.stringify({ type: "req", id, method, params }));
      send("1", "sessions.subscribe", { session: "admin-ref" });
      send("2", "chat.send", { session: "admin-ref", message: "hello" });
      await replied;
      expect(received).toEqual(
        expect.arrayContaining(["connected", "session.appended", "session.turn.started"]),
      );
      for (const event of new Set(received)) expect(documented).toContain(event);
    } finally {
      ws.close();
      await gateway.stop();
    }
  });
});
