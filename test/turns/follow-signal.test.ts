import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { followSignal } from "../../src/turns/follow-signal.js";

describe("followSignal", () => {
  it("aborts the follower with the parent's reason", () => {
    const parent = new AbortController();
    const follower = new AbortController();
    followSignal(follower, parent.signal);
    const reason = new Error("shutting down");
    parent.abort(reason);
    expect(follower.signal.aborted).toBe(true);
    expect(follower.signal.reason).toBe(reason);
  });

  it("leaves a follower that detached alone, and aborts the others", () => {
    const parent = new AbortController();
    const gone = new AbortController();
    const kept = new AbortController();
    const detach = followSignal(gone, parent.signal);
    followSignal(kept, parent.signal);
    detach();
    parent.abort();
    expect(gone.signal.aborted).toBe(false);
    expect(kept.signal.aborted).toBe(true);
  });

  it("aborts at once when the parent already is", () => {
    const parent = new AbortController();
    parent.abort("early");
    const follower = new AbortController();
    followSignal(follower, parent.signal);
    expect(follower.signal.reason).toBe("early");
  });

  it("holds one listener on a parent however many turns follow it", () => {
    const parent = new AbortController();
    const detaches = Array.from({ length: 100 }, () => followSignal(new AbortController(), parent.signal));
    expect(getEventListeners(parent.signal, "abort")).toHaveLength(1);
    for (const detach of detaches) detach();
    expect(getEventListeners(parent.signal, "abort")).toHaveLength(1);
  });

  it("follows nothing without a parent", () => {
    const follower = new AbortController();
    followSignal(follower, undefined)();
    expect(follower.signal.aborted).toBe(false);
  });
});
