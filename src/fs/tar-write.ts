/**
 * Tar headers for regular files (POSIX ustar, with a pax `path` record for a name ustar cannot hold),
 * as GNU and BSD tar read them: what a backup needs to write, and nothing else.
 */

export const BLOCK = 512;
/** The end of an archive: two zero blocks. */
export const TAR_END = Buffer.alloc(2 * BLOCK);
/** The largest size ustar's 11 octal digits hold. */
const MAX_USTAR_SIZE = 0o77777777777;

export interface TarFile {
  /** The path inside the archive, `/`-separated, relative. */
  name: string;
  size: number;
  mode: number;
  mtimeMs: number;
}

/** The header block(s) that go before a file's bytes. */
export function tarHeader(file: TarFile): Buffer {
  const nameBytes = Buffer.byteLength(file.name);
  const ascii = /^[\x20-\x7e]*$/.test(file.name);
  const records: string[] = [];
  if (!ascii || nameBytes > 100) records.push(paxRecord("path", file.name));
  if (file.size > MAX_USTAR_SIZE) records.push(paxRecord("size", String(file.size)));
  const main = ustarHeader({
    name: ascii ? file.name.slice(-100) : "pax-named-file",
    size: Math.min(file.size, MAX_USTAR_SIZE),
    mode: file.mode,
    mtimeMs: file.mtimeMs,
    type: "0",
  });
  if (records.length === 0) return main;
  const body = Buffer.from(records.join(""));
  const pax = ustarHeader({
    name: "PaxHeader",
    size: body.length,
    mode: 0o644,
    mtimeMs: file.mtimeMs,
    type: "x",
  });
  return Buffer.concat([pax, body, padding(body.length), main]);
}

/** Zeros up to the next block boundary after `size` bytes. */
export function padding(size: number): Buffer {
  const rest = size % BLOCK;
  return Buffer.alloc(rest === 0 ? 0 : BLOCK - rest);
}

/** `"<length> key=value\n"`, the length counting itself. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body) + 1;
  while (String(length).length + Buffer.byteLength(body) !== length) length++;
  return `${length}${body}`;
}

function ustarHeader(h: { name: string; size: number; mode: number; mtimeMs: number; type: string }): Buffer {
  const block = Buffer.alloc(BLOCK);
  block.write(h.name, 0, 100, "utf8");
  octal(block, 100, 8, h.mode & 0o7777);
  octal(block, 108, 8, 0);
  octal(block, 116, 8, 0);
  octal(block, 124, 12, h.size);
  octal(block, 136, 12, Math.floor(h.mtimeMs / 1000));
  block.write(h.type, 156, 1, "latin1");
  block.write("ustar\0", 257, 6, "latin1");
  block.write("00", 263, 2, "latin1");
  // The checksum is summed with its own field as spaces.
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, 8, "latin1");
  return block;
}

function octal(block: Buffer, at: number, width: number, value: number): void {
  block.write(`${value.toString(8).padStart(width - 1, "0")}\0`, at, width, "latin1");
}
