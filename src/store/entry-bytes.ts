import type { EntryInput } from "../model/entry.js";

/** About what storing these inputs writes (their JSON), for the writer's byte-bounded queue. */
export function inputBytes(inputs: readonly EntryInput[]): number {
  let bytes = 0;
  for (const input of inputs) bytes += JSON.stringify(input).length;
  return bytes;
}
