import { describe, expect, it } from "vitest";
import {
  DEFAULT_RESET_TRIGGERS,
  parseResetTrigger,
  validateResetTriggers,
} from "../../src/lifecycle/triggers.js";
import { isSessiondError } from "../../src/model/errors.js";

describe("parseResetTrigger with the default triggers", () => {
  it("defaults to /new and /reset", () => {
    expect(DEFAULT_RESET_TRIGGERS).toEqual(["/new", "/reset"]);
  });

  it.each([
    ["/new", "/new", ""],
    ["/reset", "/reset", ""],
    ["/NEW", "/new", ""],
    ["/Reset please", "/reset", "please"],
    ["   /new   ", "/new", ""],
    ["\n\t/new hello", "/new", "hello"],
    ["  /reset   summarise this  ", "/reset", "summarise this"],
    ["/new@mybot", "/new", ""],
    ["/NEW@MyBot what is the weather?", "/new", "what is the weather?"],
    ["/reset@some_other_bot hi", "/reset", "hi"],
    ["/new\nfirst line\nsecond line", "/new", "first line\nsecond line"],
    ["/new\n\n  indented\n\nlast  \n", "/new", "indented\n\nlast"],
    ["/new\u00a0hello", "/new", "hello"],
  ])("%j starts a fresh session", (text, trigger, rest) => {
    expect(parseResetTrigger(text)).toEqual({ trigger, rest });
  });

  it.each([
    "",
    "   ",
    "hello",
    "hello /new",
    "/newsletter",
    "/new-thing",
    "/resets",
    "/new!",
    "/new:",
    "new",
    "//new",
    "/new@",
    "@mybot /new",
    "/ne w",
  ])("%j is not a trigger", (text) => {
    expect(parseResetTrigger(text)).toBeUndefined();
  });
});

describe("parseResetTrigger with configured triggers", () => {
  it("uses only the configured ones and returns the trigger as configured", () => {
    const triggers = ["!Fresh", "/start"];
    expect(parseResetTrigger("!fresh begin again", triggers)).toEqual({
      trigger: "!Fresh",
      rest: "begin again",
    });
    expect(parseResetTrigger("/START@bot", triggers)).toEqual({ trigger: "/start", rest: "" });
    expect(parseResetTrigger("/new", triggers)).toBeUndefined();
    expect(parseResetTrigger("!freshen", triggers)).toBeUndefined();
  });

  it("never matches with an empty list (triggers turned off)", () => {
    expect(parseResetTrigger("/new", [])).toBeUndefined();
  });

  it("matches the first configured trigger that fits", () => {
    expect(parseResetTrigger("/new x", ["/NEW", "/new"])).toEqual({ trigger: "/NEW", rest: "x" });
  });

  it("accepts a mention only for the bot when one is named", () => {
    const options = { botUsername: "@MyBot" };
    expect(parseResetTrigger("/new@mybot hi", undefined, options)).toEqual({ trigger: "/new", rest: "hi" });
    expect(parseResetTrigger("/new@otherbot hi", undefined, options)).toBeUndefined();
    expect(parseResetTrigger("/new hi", undefined, options)).toEqual({ trigger: "/new", rest: "hi" });
  });

  it.each([[[""]], [["/new", "two words"]], [["/new\t"]], [[" /new"]]])(
    "rejects invalid triggers %j",
    (triggers) => {
      let caught: unknown;
      try {
        parseResetTrigger("/new", triggers);
      } catch (error) {
        caught = error;
      }
      expect(isSessiondError(caught, "INVALID_ARGUMENT")).toBe(true);
      expect(() => validateResetTriggers(triggers)).toThrow(/non-empty string without whitespace/);
    },
  );
});
