import { type EntryInput, entryText } from "../model/entry.js";

/** Bytes of a line besides its text (header, field names), roughly. */
const LINE_OVERHEAD = 160;

/** Roughly what appending `inputs` writes: the estimate each submit gives the write queue's byte bound. */
export function inputBytes(inputs: readonly EntryInput[]): number {
  let bytes = 0;
  for (const input of inputs) bytes += LINE_OVERHEAD + entryText(input).length;
  return bytes;
}

/** The estimate for a write without entries of its own (a patch, a reset, a delete). */
export const SMALL_WRITE_BYTES = LINE_OVERHEAD;
