/**
 * How much of a source folder an import reads. The operator imports what a user hands over, so every
 * file, line, row and decompressed blob has a cap, and the whole read has a budget: memory stays bounded
 * whatever the folder holds. Over a cap is one reported problem; the rest still comes in.
 */
export interface ImportLimits {
  /** One file read whole (a JSONL transcript, an index, a meta file). */
  fileBytes: number;
  /** One JSONL line, one SQLite row's text, one decompressed zstd event. */
  lineBytes: number;
  /** One decompressed archive (a whole transcript kept as one blob). */
  archiveBytes: number;
  /** Nesting of `[` and `{` in one JSON text: deeper is a JSON bomb, never parsed. */
  jsonDepth: number;
  /** All files and blobs of one import together. */
  totalBytes: number;
}

const MiB = 1024 * 1024;

/**
 * OpenClaw compresses lines of at most 4 MiB (peer-formats §1.5) and the peers' transcripts are text:
 * these leave room for any real session and stop a bomb early.
 */
export const DEFAULT_IMPORT_LIMITS: Readonly<ImportLimits> = {
  fileBytes: 256 * MiB,
  lineBytes: 16 * MiB,
  archiveBytes: 256 * MiB,
  jsonDepth: 128,
  totalBytes: 2048 * MiB,
};

/** A human size for problem lines: `300 MiB`, `12 KiB`, `900 bytes`. */
export function sizeText(bytes: number): string {
  if (bytes >= MiB) return `${Math.round(bytes / MiB)} MiB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KiB`;
  return `${bytes} bytes`;
}
