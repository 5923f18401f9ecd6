import { describe, expect, it } from "vitest";
import { MAX_KEY_BYTES, validateKey } from "../../src/keys/index.js";
import { isSessiondError } from "../../src/model/errors.js";

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return isSessiondError(error) ? error.code : "not a SessiondError";
  }
  return undefined;
}

describe("validateKey", () => {
  it("returns a valid key unchanged", () => {
    expect(validateKey("telegram:123456789")).toBe("telegram:123456789");
    expect(validateKey("msteams:19:0123456789abcdef0123456789abcdef@thread.v2")).toBe(
      "msteams:19:0123456789abcdef0123456789abcdef@thread.v2",
    );
    expect(validateKey("user_Алиса:😀")).toBe("user_Алиса:😀");
  });

  it("rejects a non-string and an empty key with INVALID_KEY", () => {
    expect(codeOf(() => validateKey(42 as unknown as string))).toBe("INVALID_KEY");
    expect(codeOf(() => validateKey(undefined as unknown as string))).toBe("INVALID_KEY");
    expect(codeOf(() => validateKey(""))).toBe("INVALID_KEY");
    expect(() => validateKey("")).toThrow(/empty/);
  });

  it("accepts exactly 512 UTF-8 bytes and rejects 513", () => {
    expect(MAX_KEY_BYTES).toBe(512);
    expect(validateKey("a".repeat(512))).toHaveLength(512);
    expect(codeOf(() => validateKey("a".repeat(513)))).toBe("INVALID_KEY");
    expect(() => validateKey("a".repeat(513))).toThrow(/512 UTF-8 bytes/);
  });

  it("counts bytes, not characters", () => {
    const twoByte = "é".repeat(256);
    expect(validateKey(twoByte)).toBe(twoByte);
    expect(codeOf(() => validateKey(`${twoByte}a`))).toBe("INVALID_KEY");
    const fourByte = "😀".repeat(128);
    expect(validateKey(fourByte)).toBe(fourByte);
    expect(codeOf(() => validateKey(`${fourByte}a`))).toBe("INVALID_KEY");
  });

  it.each([
    ["NUL", "a\u0000b"],
    ["newline", "a\nb"],
    ["unit separator", "a\u001fb"],
    ["DEL", "a\u007fb"],
    ["C1 start", "a\u0080b"],
    ["C1 end", "a\u009fb"],
    ["line separator", "a\u2028b"],
    ["paragraph separator", "a\u2029b"],
  ])("rejects a %s", (_name, key) => {
    expect(codeOf(() => validateKey(key))).toBe("INVALID_KEY");
    expect(() => validateKey(key)).toThrow(/control character U\+/);
  });

  it("accepts the neighbours of the control ranges", () => {
    expect(validateKey(" ~\u00a0\u2027\u202a")).toBe(" ~\u00a0\u2027\u202a");
  });

  it("rejects lone surrogates, which UTF-8 would turn into the same bytes", () => {
    expect(codeOf(() => validateKey("a\ud800"))).toBe("INVALID_KEY");
    expect(codeOf(() => validateKey("\udc00a"))).toBe("INVALID_KEY");
    expect(codeOf(() => validateKey("\ud83d\ud83d"))).toBe("INVALID_KEY");
  });
});
