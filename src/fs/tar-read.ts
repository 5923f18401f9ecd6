import { BLOCK } from "./tar-write.js";

/** A member of an archive as its header says. */
export interface TarMember {
  name: string;
  size: number;
  mode: number;
  /** ustar's type flag: "0" a regular file, "5" a directory, others (links, devices…) as they are. */
  type: string;
}

/** Where a regular file's bytes go, in order. */
export interface TarSink {
  write(bytes: Buffer): void;
  end(): void;
}

export class TarFormatError extends Error {
  override name = "TarFormatError";
}

/**
 * Reads an archive (ustar with pax `path` and `size` records, as tar-write.ts writes and GNU tar does) as
 * chunks arrive, with memory bounded by one header: `member` is told each member and answers where a
 * regular file's bytes go. Returns whether the archive ended as an archive does (its zero blocks).
 */
export async function readTar(
  chunks: AsyncIterable<Buffer>,
  member: (m: TarMember) => TarSink | undefined,
): Promise<{ ended: boolean }> {
  let pending: Buffer = Buffer.alloc(0);
  /** Bytes of the current member's body still to come, and the padding after them. */
  let body = 0;
  let pad = 0;
  let sink: TarSink | undefined;
  /** A pax header's body being gathered, and what it says for the next member. */
  let pax: Buffer[] | undefined;
  let overrides: Record<string, string> = {};
  for await (const chunk of chunks) {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    let at = 0;
    while (at < pending.length) {
      if (body > 0) {
        const take = Math.min(body, pending.length - at);
        const part = pending.subarray(at, at + take);
        if (pax) {
          pax.push(Buffer.from(part));
        } else sink?.write(part);
        at += take;
        body -= take;
        if (body === 0) {
          if (pax) {
            overrides = { ...overrides, ...parsePax(Buffer.concat(pax)) };
            pax = undefined;
          } else sink?.end();
          sink = undefined;
        }
        continue;
      }
      if (pad > 0) {
        const take = Math.min(pad, pending.length - at);
        at += take;
        pad -= take;
        continue;
      }
      if (pending.length - at < BLOCK) break;
      const header = pending.subarray(at, at + BLOCK);
      at += BLOCK;
      if (header.every((b) => b === 0)) return { ended: true };
      const parsed = parseHeader(header);
      const size = overrides.size !== undefined ? Number(overrides.size) : parsed.size;
      body = size;
      pad = (BLOCK - (size % BLOCK)) % BLOCK;
      if (parsed.type === "x") {
        // An empty one says nothing.
        pax = size > 0 ? [] : undefined;
      } else if (parsed.type === "g") {
        // Global records (GNU tar's mtime defaults) change nothing sessiond reads; the body is skipped.
        sink = undefined;
      } else {
        const m = { ...parsed, size, name: overrides.path ?? parsed.name };
        overrides = {};
        sink = member(m);
        if (size === 0) sink?.end();
      }
    }
    pending = pending.subarray(at);
  }
  // The bytes stopped before the archive's end: cut short.
  return { ended: false };
}

function parseHeader(block: Buffer): TarMember {
  // Read leniently: whatever it holds, a field that is not the sum is the same finding.
  const stored = Number.parseInt(
    block
      .toString("latin1", 148, 156)
      .replace(/[\0 ]+$/g, "")
      .trim(),
    8,
  );
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : (block[i] as number);
  if (stored !== sum)
    throw new TarFormatError("a tar header's checksum does not match: not a tar file, or damaged");
  const name = text(block, 0, 100);
  const prefix = block.toString("latin1", 257, 262) === "ustar" ? text(block, 345, 155) : "";
  return {
    name: prefix ? `${prefix}/${name}` : name,
    size: octalField(block, 124, 12),
    mode: octalField(block, 100, 8),
    type: block.toString("latin1", 156, 157).replace("\0", "0"),
  };
}

function text(block: Buffer, at: number, width: number): string {
  const end = block.indexOf(0, at);
  return block.toString("utf8", at, end === -1 || end > at + width ? at + width : end);
}

function octalField(block: Buffer, at: number, width: number): number {
  const raw = block
    .toString("latin1", at, at + width)
    .replace(/[\0 ]+$/g, "")
    .trim();
  const value = raw === "" ? 0 : Number.parseInt(raw, 8);
  if (!Number.isSafeInteger(value) || value < 0) throw new TarFormatError("a tar header holds a bad number");
  return value;
}

/** `"<length> key=value\n"` records. */
function parsePax(bytes: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let at = 0;
  while (at < bytes.length) {
    const space = bytes.indexOf(0x20, at);
    const length = Number(bytes.toString("latin1", at, space));
    if (space === -1 || !Number.isSafeInteger(length) || length <= 0) break;
    const record = bytes.toString("utf8", space + 1, at + length - 1);
    const eq = record.indexOf("=");
    if (eq > 0) out[record.slice(0, eq)] = record.slice(eq + 1);
    at += length;
  }
  return out;
}
