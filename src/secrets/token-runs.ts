/** Which runs of token characters a text holds, found in one pass (a regex for the same costs 10-20x more). */
export interface TokenRuns {
  /** A run of 15+ of `[A-Za-z0-9_+/=.:-]`: every token shape's match has one. */
  long: boolean;
  /** A run of 20+ of `[A-Za-z0-9_+=-]`, or a PEM header: every secret the preset knows has one. */
  presetCandidate: boolean;
}

export const LONG_RUN = 15;
const PRESET_RUN = 20;
/** What every private key block the preset knows begins with. */
export const PEM_HEADER = "-----BEGIN";
// Per UTF-16 code unit: bit 1 in the wide class, bit 2 in the narrow one.
export const TOKEN_CLASS = new Uint8Array(65_536);
const CLASS = TOKEN_CLASS;
for (const ch of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+=-")
  CLASS[ch.charCodeAt(0)] = 3;
for (const ch of "/.:") CLASS[ch.charCodeAt(0)] = 1;

export function tokenRuns(text: string): TokenRuns {
  let wide = 0;
  let narrow = 0;
  let long = false;
  let presetCandidate = false;
  for (let i = 0; i < text.length; i++) {
    const c = CLASS[text.charCodeAt(i)] ?? 0;
    wide = c & 1 ? wide + 1 : 0;
    narrow = c & 2 ? narrow + 1 : 0;
    if (wide >= LONG_RUN) long = true;
    if (narrow >= PRESET_RUN) {
      presetCandidate = true;
      break;
    }
  }
  return { long, presetCandidate: presetCandidate || text.includes(PEM_HEADER) };
}

/** `text` with each maximal run of 15+ `[A-Za-z0-9_+/=.:-]` characters replaced by `replace(run)`. */
export function replaceLongRuns(text: string, replace: (run: string) => string): string {
  let out = "";
  let copied = 0;
  let start = 0;
  for (let i = 0; i <= text.length; i++) {
    if (i < text.length && (CLASS[text.charCodeAt(i)] ?? 0) & 1) continue;
    if (i - start >= LONG_RUN) {
      const run = text.slice(start, i);
      const replaced = replace(run);
      if (replaced !== run) {
        out += text.slice(copied, start) + replaced;
        copied = i;
      }
    }
    start = i + 1;
  }
  return copied === 0 ? text : out + text.slice(copied);
}
