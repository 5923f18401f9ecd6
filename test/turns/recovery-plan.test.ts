import { describe, expect, it } from "vitest";
import type { EntryInput } from "../../src/model/entry.js";
import type { Envelope } from "../../src/model/envelope.js";
import type { InboxItem } from "../../src/model/inbox.js";
import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { planRecovery } from "../../src/turns/recovery.js";

const KEY = "telegram:7";
const init = { agent: "main", channel: "telegram", createdBy: "7" };
const envelope = (text: string, id: string): Envelope => ({
  channel: "telegram",
  chat: { type: "direct", id: "7" },
  sender: { id: "7" },
  text,
  platformMessageId: id,
});
const item = (id: string, text: string): InboxItem => ({
  id,
  key: KEY,
  envelope: envelope(text, `tg-${id}`),
  state: "running",
  admittedAt: 0,
  updatedAt: 0,
});
const user = (text: string, id: string): EntryInput => ({
  type: "message",
  role: "user",
  content: text,
  idempotencyKey: `tg-${id}`,
});
const replyTo = (turnInputId: string, text: string): EntryInput => ({
  type: "message",
  role: "assistant",
  content: text,
  idempotencyKey: `turn:${turnInputId}:reply`,
});

describe("planRecovery", () => {
  it("does not take the reply of a later turn that another gateway ran as the reply of a cut-off input", async () => {
    const store = new MemoryStore();
    // A's turn stored "hang" and died; B then ran its own input "after" on the key and replied to it.
    await store.append(KEY, [user("hang", "a1")], { init });
    const {
      entries: [after],
    } = await store.append(KEY, [user("after", "b1")]);
    await store.append(KEY, [replyTo(after!.id, "echo: after")]);
    const [plan] = await planRecovery(store, [item("a1", "hang")], 0, 60_000);
    expect(plan).toMatchObject({ action: "interrupted", input: { content: "hang" } });
  });

  it("marks done every input of a turn that collected them, when all of them are recovered", async () => {
    const store = new MemoryStore();
    // One turn collected two inputs (the last is the turn's input) and replied; the inbox never heard.
    await store.append(KEY, [user("first", "c1")], { init });
    const {
      entries: [second],
    } = await store.append(KEY, [user("second", "c2")]);
    const {
      entries: [reply],
    } = await store.append(KEY, [replyTo(second!.id, "both")]);
    const plans = await planRecovery(store, [item("c1", "first"), item("c2", "second")], 0, 60_000);
    expect(plans.map((p) => p.action)).toEqual(["done", "done"]);
    expect(plans.map((p) => (p.action === "done" ? p.replyId : undefined))).toEqual([reply!.id, reply!.id]);
  });

  it("marks done an input whose own turn's reply is stored, and one a running turn was steered by", async () => {
    const store = new MemoryStore();
    const {
      entries: [first],
    } = await store.append(KEY, [user("first", "s1")], { init });
    await store.append(KEY, [user("steer", "s2")]);
    await store.append(KEY, [replyTo(first!.id, "answered both")]);
    const plans = await planRecovery(store, [item("s1", "first"), item("s2", "steer")], 0, 60_000);
    expect(plans.map((p) => p.action)).toEqual(["done", "done"]);
  });
});
