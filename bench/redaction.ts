import { parseEntryInput } from "../src/model/entry-schema.js";
import { redactSecrets } from "../src/secrets/index.js";
import type { Bench, Row } from "./report.js";
import { below, fixed, ratioText } from "./report.js";
import { messageContents, nowMs, userMessage } from "./support.js";

export interface RedactionResult {
  messages: number;
  /** µs per 500-byte chat message, words only (the preset's gate keeps its scanners out). */
  plainUs: number;
  /** µs per 500-byte message with a URL and a commit hash: the token shapes and some preset rules run. */
  tokensUs: number;
  /** µs per message to check it and serialise it, which every append does anyway. */
  baselineUs: number;
}

const BYTES = 500;
const TOKENS = " see https://github.com/acme/app/blob/3f2a9b0c1d4e5f60718293a4b5c6d7e8f9012345/src/Server.ts";
// Informational: redaction within a few times what checking and serialising the message costs.
const MAX_PLAIN_RATIO = 3;
const MAX_TOKENS_RATIO = 10;

function perMessageUs(texts: readonly string[], rounds: number, work: (text: string) => unknown): number {
  for (const text of texts) work(text);
  const start = nowMs();
  for (let r = 0; r < rounds; r++) for (const text of texts) work(text);
  return ((nowMs() - start) * 1000) / (rounds * texts.length);
}

/** What redaction adds to every stored message, beside what the store already spends on it. */
export const redactionCost: Bench<RedactionResult> = {
  name: "secret redaction per stored message",
  async run(ctx) {
    const rounds = ctx.quick ? 5 : 40;
    const plain = messageContents(500, BYTES, 23);
    const tokens = plain.map((text) => `${text.slice(0, BYTES - TOKENS.length)}${TOKENS}`);
    const baselineUs = perMessageUs(plain, rounds, (text) =>
      JSON.stringify(parseEntryInput(userMessage(text))),
    );
    const plainUs = perMessageUs(plain, rounds, redactSecrets);
    const tokensUs = perMessageUs(tokens, rounds, redactSecrets);
    ctx.log(`redaction: ${fixed(plainUs, 1)} us plain, ${fixed(tokensUs, 1)} us with tokens`);
    return { messages: plain.length * rounds, plainUs, tokensUs, baselineUs };
  },
  rows(r): Row[] {
    const base = `${fixed(r.baselineUs, 1)} us (check + serialise)`;
    return [
      {
        figure: "redact a 500-byte chat message",
        value: `${fixed(r.plainUs, 1)} us`,
        baseline: base,
        ratio: ratioText(r.plainUs / r.baselineUs),
        checks: [below(r.plainUs / r.baselineUs, MAX_PLAIN_RATIO, `${MAX_PLAIN_RATIO}x baseline`)],
      },
      {
        figure: "redact one with a URL and a commit hash",
        value: `${fixed(r.tokensUs, 1)} us`,
        baseline: base,
        ratio: ratioText(r.tokensUs / r.baselineUs),
        checks: [below(r.tokensUs / r.baselineUs, MAX_TOKENS_RATIO, `${MAX_TOKENS_RATIO}x baseline`)],
      },
    ];
  },
};
