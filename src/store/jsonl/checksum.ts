import * as zlib from "node:zlib";

let table: Uint32Array | undefined;

/** CRC-32 (zlib's): native from Node 20.15, computed in JS before that. */
export function crc32(bytes: Uint8Array): number {
  return typeof zlib.crc32 === "function" ? zlib.crc32(bytes) : crc32Portable(bytes);
}

export function crc32Portable(bytes: Uint8Array): number {
  table ??= makeTable();
  let crc = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) crc = table[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

function makeTable(): Uint32Array {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
}
