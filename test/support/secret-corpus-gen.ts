/** The seeded generator and alphabets the secret corpus builds its samples with (none is a real key). */

// mulberry32: the same corpus on every run.
export function generator(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const next = generator(20261201);
export const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
export const UPPER_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
export const HEX = "0123456789abcdef";
export const B64 = `${ALNUM}+/`;
export const B64URL = `${ALNUM}_-`;
export const DIGITS = "0123456789";
export const LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** `n` characters of `alphabet`, with at least two of each class the alphabet has (as random keys do). */
export function rand(alphabet: string, n: number): string {
  for (;;) {
    let out = "";
    for (let i = 0; i < n; i++) out += alphabet[Math.floor(next() * alphabet.length)];
    const classes = [/[A-Z]/g, /[a-z]/g, /[0-9]/g].filter((c) => c.test(alphabet));
    if (classes.every((c) => (out.match(c)?.length ?? 0) >= Math.min(2, n / 8))) return out;
  }
}

export const b64 = (text: string) => Buffer.from(text).toString("base64");
export const pem = (label: string) =>
  `-----BEGIN ${label}-----\n${rand(B64, 64)}\n${rand(B64, 64)}\n${rand(B64, 20)}==\n-----END ${label}-----`;
export const jwt = () =>
  `${b64url('{"alg":"HS256","typ":"JWT"}')}.${b64url(`{"sub":"${rand(DIGITS, 10)}","exp":1900000000}`)}.${rand(B64URL, 43)}`;
export function b64url(text: string): string {
  return Buffer.from(text).toString("base64url");
}

/** `ops_` and base64 JSON ending in `}` alone in its last group (`fQ==`), as 1Password's tokens are. */
export function onePasswordToken(): string {
  let json = `{"signInAddress":"my.1password.com","userAuth":{"method":"SRPg-4096","alg":"PBES2g-HS256","iterations":650000,"salt":"${rand(B64URL, 22)}"},"email":"${rand(HEX, 10)}@1passwordserviceaccounts.com","srpX":"${rand(HEX, 64)}","muk":{"k":"${rand(B64URL, 43)}"}`;
  while ((json.length + 1) % 3 !== 1) json += " ";
  return `ops_${b64(`${json}}`)}`;
}

/** A sample: its name, the secret, and how the secret turns up in text. */
export type Make = [name: string, secret: string, wrap: (secret: string) => string];

export const inText = (s: string) => `please use ${s} for the deploy`;
