import { describe, expect, it } from "vitest";
import type { Entry } from "../../src/model/entry.js";
import type { ClientMessage } from "../../src/model/envelope.js";
import { continuesStored } from "../../src/turns/client-history.js";

const TRIGGERS = ["/new", "/reset"];
const user = (content: string): ClientMessage => ({ role: "user", content });
const assistant = (content: string): ClientMessage => ({ role: "assistant", content });

/** Stored entries as a session holds them: messages, with a note between them. */
function stored(...messages: ClientMessage[]): Entry[] {
  const note = { type: "note", level: "error", code: "TURN_FAILED", text: "x" } as unknown as Entry;
  return messages.flatMap((m) => [{ type: "message", ...m } as unknown as Entry, note]);
}

describe("continuesStored", () => {
  it("is continued by anything when the kept context is empty, by nothing shorter otherwise", () => {
    expect(continuesStored([], [user("anything"), assistant("at all")], TRIGGERS)).toBe(true);
    expect(continuesStored(stored(user("a"), assistant("A")), [], TRIGGERS)).toBe(false);
  });

  it("needs the stored messages as the tail of the client's: more before them is fine, a change is not", () => {
    const kept = stored(user("b"), assistant("B"));
    expect(continuesStored(kept, [user("a"), assistant("A"), user("b"), assistant("B")], TRIGGERS)).toBe(
      true,
    );
    expect(continuesStored(kept, [user("b2"), assistant("B")], TRIGGERS)).toBe(false);
    expect(continuesStored(kept, [user("b"), assistant("B"), user("c"), assistant("C")], TRIGGERS)).toBe(
      false,
    );
  });

  it("drops a bare trigger or a /queue command with its answer, and reads /new text as text", () => {
    const kept = stored(user("a"), assistant("A"), user("b"), assistant("B"));
    const client = [
      user("/new"),
      assistant("Started a new session."),
      user("/new a"),
      assistant("A"),
      user("/queue collect"),
      assistant("Queue mode: collect."),
      user("b"),
      assistant("B"),
    ];
    expect(continuesStored(kept, client, TRIGGERS)).toBe(true);
  });

  it("drops user messages that got no answer, on both sides", () => {
    const failedStored = stored(user("a"), assistant("A"), user("failed"));
    expect(continuesStored(failedStored, [user("a"), assistant("A")], TRIGGERS)).toBe(true);
    const failedClient = [user("a"), assistant("A"), user("failed"), user("retry"), assistant("R")];
    expect(
      continuesStored(
        stored(user("a"), assistant("A"), user("retry"), assistant("R")),
        failedClient,
        TRIGGERS,
      ),
    ).toBe(true);
  });

  it("compares after line endings, outer whitespace and secret redaction", () => {
    const secret = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
    const kept = stored(user("line one\nline two"), assistant("key [redacted] noted"));
    expect(
      continuesStored(kept, [user(" line one\r\nline two "), assistant(`key ${secret} noted`)], TRIGGERS),
    ).toBe(true);
    expect(
      continuesStored(kept, [user("line one line two"), assistant(`key ${secret} noted`)], TRIGGERS),
    ).toBe(false);
  });
});
