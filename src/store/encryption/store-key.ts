import { SessiondError } from "../../model/errors.js";
import { KEY_BYTES } from "./envelope.js";

/**
 * The store key from the environment variable `store.encryption.key_env` names: 32 bytes in base64 (for
 * example `openssl rand -base64 32`). A missing or wrong-size key is CONFIG_INVALID naming the variable,
 * never its value.
 */
export function storeKey(variable: string, env: NodeJS.ProcessEnv): Buffer {
  const text = env[variable]?.trim();
  if (!text)
    throw new SessiondError(
      "CONFIG_INVALID",
      `store.encryption.key_env names ${variable}, which is not set: set it to 32 random bytes in base64 (openssl rand -base64 32)`,
    );
  const key = /^[A-Za-z0-9+/]+={0,2}$/.test(text) ? Buffer.from(text, "base64") : Buffer.alloc(0);
  if (key.length !== KEY_BYTES)
    throw new SessiondError(
      "CONFIG_INVALID",
      `${variable} must hold ${KEY_BYTES} bytes in base64 (openssl rand -base64 32); it holds ${key.length === 0 ? "no base64" : `${key.length} bytes`}`,
    );
  return key;
}
