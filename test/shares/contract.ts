import { describe, expect, it } from "vitest";
import type { Engine } from "../../src/engine.js";
import type { EntryInput } from "../../src/model/entry.js";
import { MAX_SHARES_PER_KEY } from "../../src/shares/shares.js";
import { SHARE_MESSAGE_CHARS, SHARE_PAGE_BYTES } from "../../src/shares/view.js";

/** How a backend's engine is opened for one test; `again` opens a second engine on the same data. */
export interface SharesBackend {
  open(): Promise<Engine>;
  again(): Promise<Engine>;
}

export const user = (content: string): EntryInput => ({ type: "message", role: "user", content });
export const assistant = (content: string, extra: Partial<EntryInput> = {}): EntryInput =>
  ({ type: "message", role: "assistant", content, ...extra }) as EntryInput;

/** A conversation with everything a share leaves out: a tool call and result, reasoning, a note, a system message. */
export const CONVERSATION: EntryInput[] = [
  { type: "message", role: "system", content: "SYSTEM-PROMPT-TEXT" },
  user("What is the weather in Lisbon?"),
  assistant("", { toolCalls: [{ id: "c1", name: "weather", arguments: { city: "TOOL-ARGUMENT" } }] }),
  { type: "message", role: "tool", content: "TOOL-RESULT-TEXT", toolCallId: "c1" },
  assistant("Sunny, 24 degrees.", { parts: [{ kind: "thinking", text: "REASONING-TEXT" }] }),
  { type: "note", text: "NOTE-TEXT", level: "info" },
  { type: "usage", model: "USAGE-MODEL", inputTokens: 3 },
];

export function sharesContract(name: string, backend: SharesBackend): void {
  describe(`engine.shares on ${name}`, () => {
    it("shows only the user and assistant text up to the seq it had when shared, under an unguessable id", async () => {
      const engine = await backend.open();
      await engine.append("main:share-1", CONVERSATION);
      const link = await engine.shares.create("main:share-1");
      expect(link.id).toMatch(/^[A-Za-z0-9_-]{24}$/);
      expect(link).toMatchObject({ key: "main:share-1", headSeq: CONVERSATION.length });
      await engine.append("main:share-1", [user("LATER-MESSAGE")]);
      const view = await engine.shares.view(link.id);
      expect(view?.messages.map((m) => [m.role, m.content])).toEqual([
        ["user", "What is the weather in Lisbon?"],
        ["assistant", "Sunny, 24 degrees."],
      ]);
      expect(view?.truncated).toBe(false);
      const text = JSON.stringify(view);
      for (const hidden of [
        "SYSTEM-PROMPT",
        "TOOL-",
        "REASONING",
        "NOTE-TEXT",
        "USAGE",
        "LATER",
        "main:share-1",
      ]) {
        expect(text).not.toContain(hidden);
      }
      expect(Object.keys(view ?? {}).sort()).toEqual(["messages", "sharedAt", "title", "truncated"]);
    });

    it("lists a key's links, revokes one (revoked and unknown ids read alike), and refuses what cannot be shared", async () => {
      const engine = await backend.open();
      await engine.append("main:share-2", [user("hello")]);
      const first = await engine.shares.create("main:share-2");
      const second = await engine.shares.create("main:share-2");
      expect(first.id).not.toBe(second.id);
      expect((await engine.shares.list("main:share-2")).map((l) => l.id).sort()).toEqual(
        [first.id, second.id].sort(),
      );
      expect(await engine.shares.revoke(first.id)).toBe(true);
      expect(await engine.shares.revoke(first.id)).toBe(false);
      expect(await engine.shares.get(first.id)).toBeUndefined();
      expect(await engine.shares.view(first.id)).toBeUndefined();
      expect((await engine.shares.list("main:share-2")).map((l) => l.id)).toEqual([second.id]);
      for (const id of ["", "../../etc/passwd", "x".repeat(100_000), `${second.id}x`, "A".repeat(24)]) {
        expect(await engine.shares.view(id)).toBeUndefined();
        expect(await engine.shares.revoke(id)).toBe(false);
      }
      await expect(engine.shares.create("main:nobody")).rejects.toMatchObject({ code: "SESSION_NOT_FOUND" });
      expect(await engine.shares.view(second.id)).toBeDefined();
    });

    it("opens and revokes a link through a second engine on the same data: every call reads the store", async () => {
      const a = await backend.open();
      await a.append("main:share-3", [user("across processes"), assistant("yes")]);
      const link = await a.shares.create("main:share-3");
      const b = await backend.again();
      expect((await b.shares.view(link.id))?.messages.map((m) => m.content)).toEqual([
        "across processes",
        "yes",
      ]);
      expect(await b.shares.revoke(link.id)).toBe(true);
      expect(await a.shares.view(link.id)).toBeUndefined();
      expect(await a.shares.list("main:share-3")).toEqual([]);
    });

    it("shows nothing once the session is deleted, and lists no link of the deleted key", async () => {
      const engine = await backend.open();
      await engine.append("main:share-4", [user("soon gone")]);
      const link = await engine.shares.create("main:share-4");
      await engine.delete("main:share-4");
      expect(await engine.shares.view(link.id)).toBeUndefined();
      expect(await engine.shares.list("main:share-4")).toEqual([]);
      // The key made again is a new session: the old link still shows nothing.
      await engine.append("main:share-4", [user("a new conversation")]);
      expect(await engine.shares.view(link.id)).toBeUndefined();
    });

    it("keeps a page within its byte bound: the newest messages, each cut to its own bound", async () => {
      const engine = await backend.open();
      const big = "a long answer ".repeat(SHARE_MESSAGE_CHARS / 4);
      const mid = (i: number) => `${i} ${"a long question ".repeat(5000)}`;
      const middle = Array.from({ length: 20 }, (_, i) => user(mid(i)));
      await engine.append("main:share-5", [user("oldest"), ...middle, assistant(big)]);
      const view = await engine.shares.view((await engine.shares.create("main:share-5")).id);
      const bytes = view!.messages.reduce((n, m) => n + Buffer.byteLength(m.content), 0);
      expect(bytes).toBeLessThanOrEqual(SHARE_PAGE_BYTES);
      expect(view!.truncated).toBe(true);
      expect(view!.messages.map((m) => m.content)).not.toContain("oldest");
      const last = view!.messages.at(-1)!.content;
      expect(last.length).toBeLessThan(SHARE_MESSAGE_CHARS + 10);
      expect(last.endsWith("[…]")).toBe(true);
    });

    it(`refuses a link past ${MAX_SHARES_PER_KEY} on one key`, async () => {
      const engine = await backend.open();
      await engine.append("main:share-6", [user("popular")]);
      for (let i = 0; i < MAX_SHARES_PER_KEY; i++) await engine.shares.create("main:share-6");
      await expect(engine.shares.create("main:share-6")).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
    });
  });
}
