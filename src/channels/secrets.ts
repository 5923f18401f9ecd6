import { readFileSync } from "node:fs";
import { SessiondError } from "../model/errors.js";

/** Where a secret comes from: an environment variable or a file, named in the config; never the config itself. */
export interface SecretSource {
  env?: string;
  file?: string;
}

/**
 * The secret's value, trimmed. Errors name the variable or file, never the value; CONFIG_INVALID when
 * neither is set or the source is empty.
 */
export function readSecret(source: SecretSource, what: string, env: NodeJS.ProcessEnv): string {
  let value: string | undefined;
  if (source.env !== undefined) {
    value = env[source.env]?.trim();
    if (!value) throw configInvalid(`${what}: the environment variable ${source.env} is not set`);
  } else if (source.file !== undefined) {
    try {
      value = readFileSync(source.file, "utf8").trim();
    } catch (error) {
      throw configInvalid(`${what}: cannot read ${source.file} (${(error as NodeJS.ErrnoException).code})`);
    }
    if (!value) throw configInvalid(`${what}: ${source.file} is empty`);
  } else {
    throw configInvalid(`${what}: name an environment variable (…_env) or a file (…_file)`);
  }
  return value;
}

export function optionalSecret(
  source: SecretSource | undefined,
  what: string,
  env: NodeJS.ProcessEnv,
): string | undefined {
  if (source === undefined || (source.env === undefined && source.file === undefined)) return undefined;
  return readSecret(source, what, env);
}

function configInvalid(message: string): SessiondError {
  return new SessiondError("CONFIG_INVALID", `channels.${message}`);
}
