import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestGateway, type TestGateway } from "./helpers.js";

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => {
  await gw.stop();
});

interface Link {
  id: string;
  url: string;
  headSeq: number;
}

async function share(key: string): Promise<Link> {
  const res = await gw.api(`/api/sessions/${encodeURIComponent(key)}/share`, { method: "POST" });
  expect(res.status).toBe(201);
  return (await res.json()) as unknown as Link;
}

/** A GET with the path sent exactly as written (fetch would normalise `..` and encodings). */
function rawGet(path: string): Promise<{ status: number; body: string; headers: Record<string, unknown> }> {
  const url = new URL(gw.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method: "GET" }, (res) => {
      let body = "";
      res.on("data", (chunk: Buffer) => (body += chunk.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("share links over REST", () => {
  it("opens without the token as a page and as JSON, escaped, pinned at the seq it was made at", async () => {
    await gw.engine.append("main:rest-share", [
      { type: "message", role: "user", content: "<script>alert(1)</script> & hello" },
      { type: "message", role: "assistant", content: "hi there" },
      { type: "note", text: "NOTE-TEXT" },
    ]);
    const link = await share("main:rest-share");
    expect(link.url).toBe(`${gw.url}/share/${link.id}`);
    expect(link.headSeq).toBe(3);
    await gw.engine.append("main:rest-share", [{ type: "message", role: "user", content: "LATER" }]);

    const page = await fetch(link.url);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(page.headers.get("cache-control")).toBe("no-store");
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    const html = await page.text();
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt; &amp; hello");
    expect(html).toContain("hi there");
    expect(html).not.toContain("<script>");
    for (const hidden of ["NOTE-TEXT", "LATER", "main:rest-share"]) expect(html).not.toContain(hidden);

    const asJson = await fetch(`${link.url}.json`);
    expect(asJson.headers.get("content-type")).toMatch(/^application\/json/);
    const view = (await asJson.json()) as { messages: Array<{ role: string; content: string }> };
    expect(view.messages).toEqual([
      expect.objectContaining({ role: "user", content: "<script>alert(1)</script> & hello" }),
      expect.objectContaining({ role: "assistant", content: "hi there" }),
    ]);
  });

  it("lists and revokes; a revoked, unknown or malformed id is one and the same 404", async () => {
    await gw.engine.append("main:rest-revoke", [{ type: "message", role: "user", content: "to revoke" }]);
    const link = await share("main:rest-revoke");
    const listed = await gw.api("/api/sessions/main%3Arest-revoke/shares");
    expect(((await listed.json()) as unknown as { shares: Link[] }).shares).toEqual([
      expect.objectContaining({ id: link.id, url: link.url }),
    ]);
    const unknownBefore = await rawGet(`/share/${"A".repeat(24)}`);
    expect((await gw.api(`/api/shares/${link.id}`, { method: "DELETE" })).status).toBe(200);
    const again = await gw.api(`/api/shares/${link.id}`, { method: "DELETE" });
    expect(again.status).toBe(404);
    expect((await again.json()).error.code).toBe("NOT_FOUND");

    const revoked = await rawGet(`/share/${link.id}`);
    expect(revoked.status).toBe(404);
    expect(revoked.body).toBe(unknownBefore.body);
    const revokedJson = await rawGet(`/share/${link.id}.json`);
    const unknownJson = await rawGet(`/share/${"A".repeat(24)}.json`);
    expect([revokedJson.status, revokedJson.body]).toEqual([404, unknownJson.body]);
    for (const path of [
      "/share/..%2F..%2Fapi%2Fsessions",
      `/share/${"x".repeat(8000)}`,
      "/share/%00%00",
      `/share/${link.id}/history`,
      "/share/",
    ]) {
      const res = await rawGet(path);
      expect(res.status, path).toBe(404);
      expect(res.body).not.toContain("to revoke");
    }
    // A dot segment leaves /share/ altogether: the API behind it still wants the token.
    expect((await rawGet("/share/../api/sessions")).status).toBe(401);
  });

  it("is no credential for the API, and its id never reaches the log", async () => {
    await gw.engine.append("main:rest-cred", [{ type: "message", role: "user", content: "secret-ish" }]);
    const link = await share("main:rest-cred");
    const presented: Array<Record<string, string>> = [
      { authorization: `Bearer ${link.id}` },
      { "x-sessiond-token": link.id },
    ];
    for (const headers of presented) {
      const res = await fetch(`${gw.url}/api/sessions`, { headers });
      expect(res.status).toBe(401);
    }
    expect((await fetch(`${gw.url}/api/sessions/main%3Arest-cred/shares`)).status).toBe(401);
    expect((await fetch(`${gw.url}/api/shares/${link.id}`, { method: "DELETE" })).status).toBe(401);
    expect((await fetch(link.url)).status).toBe(200);
    expect(JSON.stringify(gw.logs)).not.toContain(link.id);
    expect(gw.logs.some((l) => l.path === "/share/…")).toBe(true);
  });

  it("refuses a key with no session", async () => {
    const res = await gw.api("/api/sessions/main%3Anobody/share", { method: "POST" });
    expect(res.status).toBe(404);
    expect((await res.json()).error.code).toBe("SESSION_NOT_FOUND");
  });
});
