import { describe, expect, it } from "vitest";
import { canUnshare, missingAcks, PID_1, reopenInChild, runAndKill } from "./children.js";
import { type Harness, msg, type OpenedFactory } from "./fixtures.js";

/** A writer killed with SIGKILL mid-stream (then a power cut, where the factory can make one; as PID 1). */
export function crashCases(t: Harness, factory: OpenedFactory): void {
  if (factory.child && factory.persistent) {
    const child = factory.child;
    describe("crash safety", () => {
      it("keeps every acknowledged append when the writer is killed with SIGKILL", async () => {
        await t.store.close();
        const acked = await runAndKill(child(t.dir), 3000);
        expect(acked.length).toBeGreaterThanOrEqual(3000);
        factory.verifyFiles?.(t.dir);
        t.store = await factory.open(t.dir);
        const byKey = new Map<string, Array<{ seq: number; id: string }>>();
        for (const a of acked) byKey.set(a.key, [...(byKey.get(a.key) ?? []), a]);
        for (const [key, acks] of byKey) {
          const session = (await t.store.getSession(key))!;
          const entries = await t.store.readEntries(session.id);
          expect(entries.map((e) => e.seq)).toEqual(
            Array.from({ length: session.entryCount }, (_, i) => i + 1),
          );
          const ids = new Map(entries.map((e) => [e.seq, e.id]));
          for (const ack of acks) expect(ids.get(ack.seq)).toBe(ack.id);
        }
        // The store takes new appends after the crash.
        const after = await t.store.append("crash:0", [msg("after the crash")]);
        expect(after.entries[0]!.seq).toBe((await t.store.getSession("crash:0"))!.entryCount);
      });

      const powerCut = factory.faults?.powerCut;
      it.runIf(powerCut)(
        "keeps every acknowledged append through a SIGKILL mid-stream and a power cut after it",
        async () => {
          await t.store.close();
          const acked = await runAndKill(child(t.dir), 3000);
          powerCut!(t.dir);
          const { found } = await reopenInChild(child(t.dir));
          expect(Object.keys(found)).toHaveLength(20);
          expect(missingAcks(acked, found)).toEqual([]);
          t.store = await factory.open(t.dir);
        },
      );

      // A container's gateway is PID 1 on every start: whatever the backend keys on the writer's PID
      // must not take the crashed writer's state for its own.
      it.runIf(canUnshare())(
        "keeps every acknowledged append when the writer ran as PID 1 and the next one runs as PID 1 too",
        async () => {
          await t.store.close();
          const acked = await runAndKill(child(t.dir), 2000, PID_1);
          expect(acked.length).toBeGreaterThanOrEqual(2000);
          factory.faults?.powerCut?.(t.dir);
          const { pid, found } = await reopenInChild(child(t.dir), PID_1);
          expect(pid).toBe(1);
          expect(missingAcks(acked, found)).toEqual([]);
          t.store = await factory.open(t.dir);
        },
        300_000,
      );
    });
  }
}
