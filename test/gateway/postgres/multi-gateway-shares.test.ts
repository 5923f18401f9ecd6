import { describe, expect, it } from "vitest";
import { multiGatewaySuite, within } from "./gateways.js";

const suite = multiGatewaySuite();

describe("share links on several gateways on one PostgreSQL database", () => {
  it("a link minted on A opens on B; revoked on B, A answers 404 at once", async () => {
    const [, [a, b]] = await within(120_000, "two gateways to start", suite.gatewaysOn(2, 10_000));
    suite.model.setHandler(async () => ({ content: "the answer from the model" }));
    expect((await a!.chat("admin-shared", "a question for the model")).status).toBe(200);
    const minted = await a!.api("POST", "/api/sessions/admin-shared/share");
    expect(minted.status).toBe(201);
    const { id, url } = minted.body as { id: string; url: string };
    expect(url).toBe(`${a!.url}/share/${id}`);

    // No token: the link is all a reader has.
    const onB = await fetch(`${b!.url}/share/${id}.json`);
    expect(onB.status).toBe(200);
    const view = (await onB.json()) as { messages: Array<{ role: string; content: string }> };
    expect(view.messages.map((m) => m.content)).toEqual([
      "a question for the model",
      "the answer from the model",
    ]);
    expect((await fetch(`${a!.url}/share/${id}`)).status).toBe(200);
    expect((await b!.api("GET", "/api/sessions/admin-shared/shares")).body.shares).toEqual([
      expect.objectContaining({ id, url: `${b!.url}/share/${id}` }),
    ]);

    expect((await b!.api("DELETE", `/api/shares/${id}`)).body).toEqual({ revoked: true });
    // No wait and no retry: A reads the revocation from the database on this very request.
    const onA = await fetch(`${a!.url}/share/${id}`);
    expect(onA.status).toBe(404);
    expect((await fetch(`${a!.url}/share/${id}.json`)).status).toBe(404);
    expect((await a!.api("GET", "/api/sessions/admin-shared/shares")).body.shares).toEqual([]);
    expect((await a!.api("DELETE", `/api/shares/${id}`)).status).toBe(404);
  }, 300_000);
});
