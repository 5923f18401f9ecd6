import { describe, expect, it } from "vitest";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { SECRET_CORPUS, telltales } from "../support/secret-corpus.js";

const INIT = { agent: "main", channel: "web", createdBy: "bob" };
const secretOf = (name: string) => SECRET_CORPUS.find((s) => s.name === name)?.secret ?? "";

describe("the store scrubs every entry it appends", () => {
  it("leaves no secret in any field of any entry type, and keeps the caller's objects as they were", async () => {
    const gh = secretOf("GitHub classic token");
    const npm = secretOf("npm token, bare");
    const args = { query: `use ${gh}`, password: "hunter2hunter2", nested: [{ note: npm }] };
    const store = new MemoryStore();
    await store.append(
      "k",
      [
        {
          type: "message",
          role: "user",
          content: `here: ${gh}`,
          sender: { id: "bob", name: `bob ${npm}` },
          parts: [{ kind: "file", url: `https://x.test/f?token=${npm}`, name: `${gh}.txt`, text: npm }],
        },
        {
          type: "message",
          role: "assistant",
          content: "ok",
          toolCalls: [{ id: "c1", name: `lookup_${gh}`, arguments: args }],
        },
        { type: "note", text: `failed: ${npm}` },
        { type: "title", title: `deploy ${gh}` },
        { type: "usage", model: `custom-${npm}` },
        {
          type: "compaction",
          summary: `the key ${gh}`,
          fromSeq: 1,
          throughSeq: 5,
          firstKeptSeq: 6,
          tokensBefore: 10,
          tokensAfter: 5,
          summarizer: "offline",
        },
      ],
      { init: INIT },
    );
    const session = await store.getSession("k");
    const stored = JSON.stringify([session, await store.readEntries(session?.id ?? "")]);
    for (const secret of [gh, npm])
      for (const piece of telltales(secret)) expect(stored).not.toContain(piece);
    expect(stored).not.toContain("hunter2");
    expect(session?.title).toBe("deploy [redacted]");
    expect(args.query).toBe(`use ${gh}`);
    expect(args.nested[0]?.note).toBe(npm);
  });
});
