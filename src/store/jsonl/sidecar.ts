import { join } from "node:path";
import type { OverrideValue, Session } from "../../model/session.js";
import { type FileSystem, realFs, writeFileAtomic } from "./durable-fs.js";

/**
 * The metadata of a session that changes after its file is created (the metadata line is never
 * rewritten): overrides, and the key and generation after a rekey. One small file per session, named by
 * its ULID, replaced atomically.
 */
export interface Sidecar {
  key?: string;
  generation?: number;
  overrides?: Record<string, OverrideValue>;
}

const ULID = /^[0-9A-HJKMNP-TV-Z]{26}$/;

export class Sidecars {
  constructor(
    private readonly dir: string,
    private readonly fs: FileSystem = realFs,
  ) {}

  private path(sessionId: string): string {
    // Ids come from files and callers: only a ULID ever becomes a name.
    if (!ULID.test(sessionId)) throw new Error(`not a session id: ${JSON.stringify(sessionId)}`);
    return join(this.dir, `${sessionId}.json`);
  }

  read(sessionId: string): Sidecar | undefined {
    try {
      const value: unknown = JSON.parse(this.fs.readFileSync(this.path(sessionId), "utf8"));
      return typeof value === "object" && value !== null ? (value as Sidecar) : undefined;
    } catch {
      return undefined;
    }
  }

  write(session: Session): void {
    const sidecar: Sidecar = {
      key: session.key,
      generation: session.generation,
      overrides: session.overrides,
    };
    writeFileAtomic(this.path(session.id), JSON.stringify(sidecar), true, this.fs);
  }

  remove(sessionId: string): void {
    this.fs.rmSync(this.path(sessionId), { force: true });
  }
}

export function applySidecar(session: Session, sidecar: Sidecar | undefined): void {
  if (!sidecar) return;
  if (typeof sidecar.key === "string") session.key = sidecar.key;
  if (typeof sidecar.generation === "number") session.generation = sidecar.generation;
  if (sidecar.overrides && typeof sidecar.overrides === "object")
    session.overrides = { ...sidecar.overrides };
}
