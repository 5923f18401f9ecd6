import { randomBytes } from "node:crypto";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeDirSync } from "../fs/make-dir.js";

export const TOKEN_FILE = "gateway-token";

export interface ResolvedToken {
  token: string;
  /** `env`: from SESSIOND_TOKEN; `file`: read from, or generated into, `path`. */
  source: "env" | "file";
  path?: string;
  generated: boolean;
}

/**
 * The access token: SESSIOND_TOKEN when set, else the one stored in the data dir, else a new one written
 * there with mode 0600 (created exclusively, so two gateways starting at once agree on one token).
 */
export function resolveToken(dataDir: string, env: NodeJS.ProcessEnv = process.env): ResolvedToken {
  const fromEnv = env.SESSIOND_TOKEN?.trim();
  if (fromEnv) return { token: fromEnv, source: "env", generated: false };
  const path = join(dataDir, TOKEN_FILE);
  const existing = readToken(path);
  if (existing) return { token: existing, source: "file", path, generated: false };
  makeDirSync(dataDir);
  const token = randomBytes(32).toString("base64url");
  try {
    writeFileSync(path, `${token}\n`, { mode: 0o600, flag: "wx" });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    const raced = readToken(path);
    if (raced) return { token: raced, source: "file", path, generated: false };
    throw error;
  }
  // The mode given at creation is masked by the umask; make sure it is exactly 0600.
  chmodSync(path, 0o600);
  return { token, source: "file", path, generated: true };
}

function readToken(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8").trim() || undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}
