import { describe, expect, it } from "vitest";
import { contentOf, type Harness, msg, type OpenedFactory } from "./fixtures.js";

/** A failing disk: EIO from fsync, ENOSPC from a write. */
export function faultCases(t: Harness, factory: OpenedFactory): void {
  const eio = factory.faults?.eio;
  if (eio) {
    describe("a failing disk (EIO from fsync)", () => {
      it("stops the store: the write's outcome is unknown, later writes are refused though fsyncs succeed again, and nothing acknowledged is lost", async () => {
        await t.store.close();
        const writer = await eio(t.dir);
        const acknowledged = await writer.append("eio:1", "acknowledged");
        expect(acknowledged.id).toBeDefined();
        writer.fail();
        // After a failed fsync the kernel may have dropped the dirty pages: the write may or may not stay.
        expect(await writer.append("eio:1", "unknown")).toEqual({
          code: "STORE_FAILED",
          outcome: "unknown",
        });
        writer.heal();
        // A later fsync that succeeds proves nothing: the store refuses every write until it is reopened.
        expect(await writer.append("eio:2", "refused")).toEqual({
          code: "STORE_FAILED",
          outcome: "not-written",
        });
        await writer.close();
        t.store = await factory.open(t.dir);
        const session = (await t.store.getSession("eio:1"))!;
        const entries = await t.store.readEntries(session.id);
        expect(entries[0]).toMatchObject({ id: acknowledged.id, seq: 1 });
        expect(entries.map((e) => e.type === "message" && e.content)).not.toContain("refused");
        expect(await t.store.getSession("eio:2")).toBeUndefined();
        // Reopened, the store writes again.
        expect((await t.store.append("eio:1", [msg("after")])).entries[0]!.seq).toBe(entries.length + 1);
      });
    });
  }

  const enospc = factory.faults?.enospc;
  if (enospc) {
    describe("a full disk (ENOSPC from a write)", () => {
      // The error's code says which rule the backend follows: STORE_UNAVAILABLE, nothing of the write
      // stays and the store writes again once there is room; or STORE_FAILED, the store stops until it is
      // reopened (group-commit.ts). Either way nothing acknowledged is lost.
      it("fails the write with a typed error, keeps what was acknowledged, and writes again once there is room (reopened, if it stopped)", async () => {
        await t.store.close();
        const writer = await enospc(t.dir);
        const acknowledged = await writer.append("enospc:1", "acknowledged");
        expect(acknowledged.id).toBeDefined();
        writer.fail();
        const full = await writer.append("enospc:1", "refused");
        const fresh = await writer.append("enospc:2", "refused");
        expect(full.id).toBeUndefined();
        expect(["STORE_UNAVAILABLE", "STORE_FAILED"]).toContain(full.code);
        expect(fresh).toMatchObject({ code: full.code });
        writer.heal();
        const stopped = full.code === "STORE_FAILED";
        const later = await writer.append("enospc:1", "after");
        if (stopped) expect(later).toEqual({ code: "STORE_FAILED", outcome: "not-written" });
        else {
          // A store that goes on knows the refused write is not written.
          expect(full.outcome).not.toBe("unknown");
          expect(later.id).toBeDefined();
        }
        await writer.close();

        t.store = await factory.open(t.dir);
        const session = (await t.store.getSession("enospc:1"))!;
        const entries = await t.store.readEntries(session.id);
        expect(entries.map((e) => e.seq)).toEqual(entries.map((_, i) => i + 1));
        expect(entries[0]).toMatchObject({ id: acknowledged.id, content: "acknowledged" });
        const contents = entries.map(contentOf);
        if (stopped) {
          // The refused write's outcome may be unknown; what came after the stop was never written.
          expect(contents).not.toContain("after");
        } else {
          // Not written: neither the refused entry nor the session the refused write would have created.
          expect(contents).toEqual(["acknowledged", "after"]);
          expect(entries[1]!.id).toBe(later.id);
          expect(await t.store.getSession("enospc:2")).toBeUndefined();
        }
        const next = await t.store.append("enospc:1", [msg("reopened")]);
        expect(next.entries[0]!.seq).toBe(entries.length + 1);
      });
    });
  }
}
