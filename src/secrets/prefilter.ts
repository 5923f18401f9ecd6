import { SHAPES } from "./shapes.js";
import { LONG_RUN, PEM_HEADER, TOKEN_CLASS } from "./token-runs.js";

// Every string one of which a match of some scanner holds: each shape's telltales, and the preset's PEM
// header (the preset's other secrets all lie in a run of 20+ token characters, which the run check sees).
const TELLTALES = [...SHAPES.flatMap((shape) => (shape.scope === "run" ? [] : shape.telltales)), PEM_HEADER];
const SINGLE = new Set(TELLTALES.filter((t) => t.length === 1));
// A longer telltale holding one of the single characters is found through that character.
const WORDS = [...new Set(TELLTALES.filter((t) => t.length > 1 && ![...t].some((ch) => SINGLE.has(ch))))];

const WIDE = 1;
const TELLTALE = 4;
// Per UTF-16 code unit: bit 1 for a token character (of the long-run class), bit 3 for a telltale character.
const TABLE = new Uint8Array(65_536);
for (let c = 0; c < TABLE.length; c++) TABLE[c] = (TOKEN_CLASS[c] ?? 0) & WIDE;
for (const ch of SINGLE) TABLE[ch.charCodeAt(0)] = (TABLE[ch.charCodeAt(0)] ?? 0) | TELLTALE;

/**
 * Whether any scanner `redactSecrets` runs could match `text`: false only when none can, so a text it
 * clears is returned as it is without a scanner running. In one pass, a text may hold a secret when it has
 * a run of 15+ token characters (every token shape, and every secret the preset knows but PEM blocks, lies
 * in one) or a character every match of some shape holds (`:` `=` `-` today); else when it holds one of the
 * shapes' longer telltales (`Bearer`, `Basic`, `login`). Keeps no reference to the text.
 */
export function mayHoldSecret(text: string): boolean {
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    const c = TABLE[text.charCodeAt(i)] ?? 0;
    if (c & TELLTALE) return true;
    run = c & WIDE ? run + 1 : 0;
    if (run >= LONG_RUN) return true;
  }
  for (const word of WORDS) if (text.includes(word)) return true;
  return false;
}

/** The telltales the prefilter looks for, for the tests' sake: single characters, then longer strings. */
export function prefilterTelltales(): { characters: string[]; words: string[] } {
  return { characters: [...SINGLE], words: [...WORDS] };
}
