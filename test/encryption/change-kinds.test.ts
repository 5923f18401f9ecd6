import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Entry } from "../../src/model/entry.js";
import type { GroupOutcome, WriteChange, WriteGroup } from "../../src/store/driver.js";
import { DataKeys } from "../../src/store/encryption/data-keys.js";
import { SealingDriver } from "../../src/store/encryption/sealing-driver.js";
import { LogStore } from "../../src/store/log-store.js";
import { MemoryDriver } from "../../src/store/memory/memory-driver.js";

/** The memory driver, keeping a copy of every group the sealing driver hands it. */
class Recording extends MemoryDriver {
  readonly groups: WriteGroup[] = [];
  override commit(groups: readonly WriteGroup[]): GroupOutcome[] {
    this.groups.push(...structuredClone(groups));
    return super.commit(groups) as GroupOutcome[];
  }
}

describe("the sealing driver and the write changes it does not name", () => {
  it("passes a change kind it does not know through, its fields kept and the entries it carries sealed", async () => {
    const inner = new Recording();
    const sealing = new SealingDriver(inner, { keys: new DataKeys(randomBytes(32)) });
    const store = new LogStore(sealing);
    const { session, entries } = await store.append(
      "k",
      [{ type: "message", role: "user", content: "visible words" }],
      { init: { agent: "main", channel: "t", createdBy: "u" } },
    );
    const replacement: Entry = { ...entries[0]!, type: "note", text: "erased words" } as Entry;
    // A kind added to WriteChange later, with fields of its own.
    const change = {
      kind: "someLaterKind",
      session,
      seqs: [1],
      entries: [replacement],
    } as unknown as WriteChange;
    // What the append handed the driver was sealed.
    expect(inner.groups).toHaveLength(1);
    expect(JSON.stringify(inner.groups)).not.toContain("visible words");
    inner.groups.length = 0;
    await sealing.commit([{ changes: [change], expects: [] }], true);
    const passed = inner.groups[0]!.changes[0] as unknown as {
      kind: string;
      seqs: number[];
      entries: Entry[];
    };
    expect(passed.kind).toBe("someLaterKind");
    expect(passed.seqs).toEqual([1]);
    expect(JSON.stringify(passed.entries)).not.toContain("erased words");
    expect(passed.entries[0]).toMatchObject({ type: "note", seq: 1, sealed: expect.any(String) });
    await store.close();
  });

  it("seals erasure's rewrite (rewriteEntries) and reads it back opened", async () => {
    const inner = new Recording();
    const store = new LogStore(new SealingDriver(inner, { keys: new DataKeys(randomBytes(32)) }));
    const { session } = await store.append(
      "k",
      [
        { type: "message", role: "user", content: "visible words" },
        { type: "message", role: "user", content: "kept words" },
      ],
      { init: { agent: "main", channel: "t", createdBy: "u" } },
    );
    inner.groups.length = 0;
    const erased = { type: "note" as const, code: "ERASED", text: "erased words" };
    expect(await store.eraseEntries(session.id, { bodies: new Map([[1, erased]]) })).toEqual({
      rewritten: 1,
    });
    const rewrite = inner.groups[0]!.changes[0]!;
    expect(rewrite.kind).toBe("rewriteEntries");
    expect(JSON.stringify(rewrite)).not.toContain("erased words");
    expect(await store.readEntries(session.id)).toMatchObject([
      { seq: 1, type: "note", code: "ERASED", text: "erased words" },
      { seq: 2, type: "message", content: "kept words" },
    ]);
    await store.close();
  });
});
