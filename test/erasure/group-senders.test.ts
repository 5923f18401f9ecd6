import { describe, expect, it } from "vitest";
import { erasedSenders } from "../../src/lifecycle/group-erasure.js";
import { fromErasedSender } from "../../src/store/scrub.js";

describe("which group senders an erased person's accounts name", () => {
  const senders = erasedSenders(["telegram:42", "discord:dm:7", "slack:T1:U2B", "direct:Z9", "nocolon"]);
  const theirs = (channel: string, id: string) => fromErasedSender(senders, { channel, sender: { id } });

  it("reads the sender id from the account's last part, on the account's channel", () => {
    expect(theirs("telegram", "42")).toBe(true);
    expect(theirs("discord", "7")).toBe(true);
    expect(theirs("slack", "u2b")).toBe(true);
    expect(theirs("Telegram", "42")).toBe(true);
  });

  it("matches a direct: account on every channel, and nothing else on other channels", () => {
    expect(theirs("whatsapp", "z9")).toBe(true);
    expect(theirs("discord", "42")).toBe(false);
    expect(theirs("telegram", "7")).toBe(false);
    expect(theirs("telegram", "420")).toBe(false);
    expect(theirs("telegram", "nocolon")).toBe(false);
  });
});
