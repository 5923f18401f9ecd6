/**
 * Checks an Ed25519 public key as libsodium's `crypto_sign_verify_detached` does before it verifies anything:
 * the encoding must be canonical (y < p), decode to a point on the curve, and the point must not be of small
 * order (its 8th multiple the identity). OpenSSL, behind node:crypto, checks none of this: with a small-order
 * key such as `01 00…00`, signatures made without any private key verify.
 */

const P = 2n ** 255n - 19n;
const D = mod(-121665n * inverse(121666n));
const SQRT_M1 = power(2n, (P - 1n) / 4n);

function mod(a: bigint): bigint {
  const r = a % P;
  return r >= 0n ? r : r + P;
}

function power(base: bigint, exponent: bigint): bigint {
  let result = 1n;
  let b = mod(base);
  let e = exponent;
  while (e > 0n) {
    if (e & 1n) result = (result * b) % P;
    b = (b * b) % P;
    e >>= 1n;
  }
  return result;
}

function inverse(a: bigint): bigint {
  return power(a, P - 2n);
}

type Point = readonly [x: bigint, y: bigint];

/** Twisted Edwards addition (a = -1), complete on this curve. */
function add([x1, y1]: Point, [x2, y2]: Point): Point {
  const t = mod(D * x1 * x2 * y1 * y2);
  return [mod((x1 * y2 + x2 * y1) * inverse(1n + t)), mod((y1 * y2 + x1 * x2) * inverse(1n - t))];
}

/** The point a 32-byte encoding names (RFC 8032 5.1.3), or why it names none. */
function decode(bytes: Uint8Array): Point | string {
  let y = 0n;
  for (let i = 31; i >= 0; i--) y = (y << 8n) | BigInt(i === 31 ? (bytes[i] ?? 0) & 0x7f : (bytes[i] ?? 0));
  const sign = ((bytes[31] ?? 0) >> 7) & 1;
  if (y >= P) return "not canonical (y is not below 2^255 - 19)";
  const u = mod(y * y - 1n);
  const v = mod(D * y * y + 1n);
  let x = mod(u * power(v, 3n) * power(u * power(v, 7n), (P - 5n) / 8n));
  const vx2 = mod(v * x * x);
  if (vx2 !== u) {
    if (vx2 !== mod(-u)) return "not a point on the curve";
    x = mod(x * SQRT_M1);
  }
  if (x === 0n && sign === 1) return "not canonical (x = 0 with the sign bit set)";
  if (Number(x & 1n) !== sign) x = mod(-x);
  return [x, y];
}

/** Undefined for a key fit to verify signatures with, else what is wrong with it. */
export function ed25519KeyProblem(key: Uint8Array): string | undefined {
  if (key.length !== 32) return `${key.length} bytes, not 32`;
  const point = decode(key);
  if (typeof point === "string") return point;
  let multiple: Point = point;
  for (let i = 0; i < 3; i++) multiple = add(multiple, multiple);
  if (multiple[0] === 0n && multiple[1] === 1n) return "a point of small order (signatures could be forged)";
  return undefined;
}
