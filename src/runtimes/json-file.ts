import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { z } from "zod";
import { makeDirSync } from "../fs/make-dir.js";
import { SessiondError } from "../model/errors.js";

/** A small settings file (agents.json, work-sessions.json) as its schema reads it; CONFIG_INVALID if not. */
export function readJsonFile<T extends z.ZodType>(path: string, schema: T): z.infer<T> {
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new SessiondError("CONFIG_INVALID", `${path}: not JSON (${String(error)})`, { cause: error });
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new SessiondError("CONFIG_INVALID", `${path}: ${issue?.path.join(".")}: ${issue?.message}`);
  }
  return parsed.data;
}

/** Replaces the file atomically (a temp file beside it, renamed over it), readable by its owner only. */
export function writeJsonFile(path: string, value: unknown): void {
  makeDirSync(dirname(path));
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  renameSync(temp, path);
}
