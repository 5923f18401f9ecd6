import { describe, expect, it } from "vitest";
import { redactSecrets } from "../../src/secrets/index.js";
import { mayHoldSecret, prefilterTelltales } from "../../src/secrets/prefilter.js";
import { scanSecrets } from "../../src/secrets/redact.js";
import { SHAPES } from "../../src/secrets/shapes.js";
import { SECRET_CORPUS } from "../support/secret-corpus.js";
import {
  ALNUM,
  B64,
  b64,
  DIGITS,
  generator,
  HEX,
  LETTERS,
  UPPER_DIGITS,
} from "../support/secret-corpus-gen.js";

// Its own seed, so these texts do not shift the corpus' samples.
const random = generator(29);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
const token = (alphabet: string, n: number) =>
  Array.from({ length: n }, () => alphabet[Math.floor(random() * alphabet.length)]).join("");

// What the scanners look for, in and out of their places: their words in both cases, the punctuation around
// them, tokens of every length around the 8/15/20/32/40-character thresholds, and credentials without the
// characters the prefilter looks for (`Bearer abc…`, `Basic <base64>`, `login bob password pw`).
const WORDS = [
  ..."Bearer bearer BEARER Basic basic login Login password passwd pwd pw pass secret".split(" "),
  ..."token key sig authorization Authorization cookie Set-Cookie curl mysql mariadb".split(" "),
  ..."sshpass docker helm registry".split(" "),
  ..."api_key private PRIVATE KEY BEGIN END value add auth https http hooks.slack.com discord.com".split(" "),
  ..."AKIA sk sk_live ghp_ xoxb xapp eyJ AIza hf_ npm_ glpat SG ya29 the a of please use".split(" "),
];
const PUNCTUATION = [..."::==--/.@\"'_+?&<>,;{}[]()#!\\", "://", "-----", "--password", " -p", " -u", "=>"];
// Service prefixes glued to a token of any length: the shortest token shapes without : = - (`sk_live_` and
// ten characters) sit just above the prefilter's 15-character run.
const PREFIXES = "sk_live_ rk_test_ pk_live_ AKIA LTAI ghp_ hf_ npm_ sm_pat_ whsec_".split(" ");
const SPACES = [" ", " ", " ", "\n", "\t", "", "\u00a0", "\u3000", "\u2028"];
const LOWER = "abcdefghijklmnopqrstuvwxyz";
const ALPHABETS = [ALNUM, B64, HEX, UPPER_DIGITS, LETTERS, DIGITS, `${ALNUM}_-`, LOWER];

function fragment(): string {
  const roll = random();
  if (roll < 0.35) return pick(WORDS);
  if (roll < 0.5) return pick(PUNCTUATION);
  if (roll < 0.7) return token(pick(ALPHABETS), 1 + Math.floor(random() * 48));
  if (roll < 0.8) return pick(PREFIXES) + token(pick([ALNUM, UPPER_DIGITS]), 4 + Math.floor(random() * 20));
  if (roll < 0.88) return b64(`${token(LETTERS, 3)}:${token(ALNUM, 6)}`).replace(/=+$/, "");
  if (roll < 0.95) return pick(SECRET_CORPUS).secret;
  return token("ÄéßøЖ漢字🙂", 1 + Math.floor(random() * 4));
}

function generated(): string {
  const parts: string[] = [];
  const count = 1 + Math.floor(random() * 12);
  for (let i = 0; i < count; i++) parts.push(fragment(), pick(SPACES));
  return parts.join("");
}

// Texts the prefilter's characters are taken out of: the side where it says "nothing here", which is where a
// mistake would let a secret through.
const withoutTelltaleCharacters = (text: string) => text.replace(/[:=-]/g, " ");

describe("the secret prefilter", () => {
  it("clears plain chat, and redactSecrets returns it as it is", () => {
    const chat = "please remind me tomorrow about the meeting notes and send the draft to the team, thanks!";
    expect(mayHoldSecret(chat)).toBe(false);
    expect(redactSecrets(chat)).toBe(chat);
    expect(mayHoldSecret(`${chat} Bearer`)).toBe(true);
    expect(mayHoldSecret(`${chat} at 10:30`)).toBe(true);
    expect(mayHoldSecret(`${chat} ${"a".repeat(15)}`)).toBe(true);
    expect(mayHoldSecret(`${chat} ${"a".repeat(14)}`)).toBe(false);
  });

  it("looks for a telltale of every shape, and only caseless ones for a shape that ignores case", () => {
    const { characters, words } = prefilterTelltales();
    expect(characters.sort()).toEqual(["-", ":", "="]);
    expect(words.sort()).toEqual(["Basic", "Bearer", "login"]);
    for (const shape of SHAPES) {
      if (shape.scope === "run") continue;
      expect(shape.telltales.length, String(shape.pattern)).toBeGreaterThan(0);
      if (shape.pattern.flags.includes("i"))
        for (const telltale of shape.telltales) expect(telltale.toLowerCase()).toBe(telltale.toUpperCase());
    }
  });

  it("never changes what is scrubbed: over the corpus, its texts without : = -, and generated texts", () => {
    const texts = [
      ...SECRET_CORPUS.flatMap((s) => [s.text, s.secret, withoutTelltaleCharacters(s.text)]),
      ...Array.from({ length: 6000 }, generated),
      ...Array.from({ length: 6000 }, () => withoutTelltaleCharacters(generated())),
    ];
    let cleared = 0;
    let scrubbed = 0;
    let scrubbedWithoutCharacters = 0;
    for (const text of texts) {
      const full = scanSecrets(text);
      expect(redactSecrets(text), JSON.stringify(text)).toBe(full);
      if (!mayHoldSecret(text)) cleared++;
      if (full !== text) {
        scrubbed++;
        if (!/[:=-]/.test(text)) scrubbedWithoutCharacters++;
      }
    }
    // The texts reach both sides: many cleared, many scrubbed, and scrubbed ones that hold none of the
    // prefilter's characters (so it had to find them by their runs or words).
    expect(cleared).toBeGreaterThan(texts.length / 10);
    expect(scrubbed).toBeGreaterThan(texts.length / 10);
    expect(scrubbedWithoutCharacters).toBeGreaterThan(500);
  });
});
