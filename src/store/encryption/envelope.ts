import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/**
 * AES-256-GCM envelopes: base64 of nonce (12 bytes) | tag (16) | ciphertext. The additional data binds an
 * envelope to where it is stored (a session id, a seq), so one moved to another row fails authentication.
 */
const NONCE = 12;
const TAG = 16;
export const KEY_BYTES = 32;

export function seal(key: Buffer, plaintext: string | Buffer, aad: string): string {
  const nonce = randomBytes(NONCE);
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  cipher.setAAD(Buffer.from(aad, "utf8"));
  const body = cipher.update(typeof plaintext === "string" ? Buffer.from(plaintext, "utf8") : plaintext);
  const last = cipher.final();
  return Buffer.concat([nonce, cipher.getAuthTag(), body, last]).toString("base64");
}

/** The plaintext bytes, or undefined when the envelope is malformed or fails authentication. */
export function open(key: Buffer, envelope: unknown, aad: string): Buffer | undefined {
  if (typeof envelope !== "string") return undefined;
  const bytes = Buffer.from(envelope, "base64");
  if (bytes.length < NONCE + TAG) return undefined;
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, NONCE));
    decipher.setAAD(Buffer.from(aad, "utf8"));
    decipher.setAuthTag(bytes.subarray(NONCE, NONCE + TAG));
    return Buffer.concat([decipher.update(bytes.subarray(NONCE + TAG)), decipher.final()]);
  } catch {
    return undefined;
  }
}

/** A new data key for one session. */
export function newDataKey(): Buffer {
  return randomBytes(KEY_BYTES);
}

/** A key for one purpose (the inbox, exports) derived from the configured key. */
export function derivedKey(keyEncryptionKey: Buffer, purpose: string): Buffer {
  return Buffer.from(hkdfSync("sha256", keyEncryptionKey, Buffer.alloc(0), `sessiond ${purpose}`, KEY_BYTES));
}
