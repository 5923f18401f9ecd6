import { Decompress } from "fzstd";

/**
 * Decompresses zstd data as a stream, block by block (at most 128 KiB each), and stops as soon as the
 * output passes `cap`: a 9 KB frame that would expand to 300 MB costs at most `cap` bytes. fzstd's
 * streaming decoder allocates each frame's window up front, so every frame header is read first and a
 * window (or declared content size) over the cap is refused before anything is allocated.
 */
export function decompressCapped(data: Uint8Array, cap: number): Uint8Array {
  checkFrames(data, cap);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const stream = new Decompress((chunk) => {
    size += chunk.length;
    if (size > cap) throw new Error(`decompresses to more than ${cap} bytes (the cap); stopped there`);
    chunks.push(chunk);
  });
  stream.push(data, true);
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}

const ZSTD_MAGIC = 0xfd2fb528;

/** Walks the frames (RFC 8878 §3.1) without decoding them; throws on a window or content size over `cap`. */
function checkFrames(data: Uint8Array, cap: number): void {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let at = 0;
  while (at < data.length) {
    if (at + 4 > data.length) throw new Error("truncated zstd frame");
    const magic = view.getUint32(at, true);
    if (magic >>> 4 === 0x184d2a5) {
      if (at + 8 > data.length) throw new Error("truncated skippable frame");
      at += 8 + view.getUint32(at + 4, true);
      continue;
    }
    if (magic !== ZSTD_MAGIC) throw new Error("invalid zstd data");
    const flags = data[at + 4] ?? 0;
    const singleSegment = (flags >> 5) & 1;
    const dictBytes = [0, 1, 2, 4][flags & 3] ?? 0;
    const sizeFlag = flags >> 6;
    const sizeBytes = sizeFlag === 0 ? singleSegment : 1 << sizeFlag;
    let p = at + 5;
    let window = 0;
    if (!singleSegment) {
      const descriptor = data[p++] ?? 0;
      const base = 2 ** (10 + (descriptor >> 3));
      window = base + (base / 8) * (descriptor & 7);
    }
    p += dictBytes;
    let contentSize = 0;
    for (let i = 0; i < sizeBytes; i++) contentSize += (data[p + i] ?? 0) * 2 ** (8 * i);
    if (sizeBytes === 2) contentSize += 256;
    p += sizeBytes;
    if (singleSegment) window = contentSize;
    if (window > cap || contentSize > cap)
      throw new Error(`a zstd frame declares ${Math.max(window, contentSize)} bytes, over the cap of ${cap}`);
    for (let last = 0; !last; ) {
      if (p + 3 > data.length) throw new Error("truncated zstd block");
      const header = (data[p] ?? 0) | ((data[p + 1] ?? 0) << 8) | ((data[p + 2] ?? 0) << 16);
      last = header & 1;
      const type = (header >> 1) & 3;
      if (type === 3) throw new Error("reserved zstd block type");
      p += 3 + (type === 1 ? 1 : header >>> 3);
    }
    at = p + ((flags >> 2) & 1 ? 4 : 0);
  }
}
