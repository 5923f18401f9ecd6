/**
 * Whether a JSON text nests `[` / `{` deeper than `max`. V8 parses a million-deep array happily, and then
 * every recursive walk of the value (redaction, stringify, storage) overflows the stack: such a text is
 * refused before it is parsed. One linear pass that skips string contents.
 */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92) i++;
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 91 || c === 123) {
      if (++depth > max) return true;
    } else if (c === 93 || c === 125) depth--;
  }
  return false;
}

export type JsonRead = { value: unknown } | { error: string };

/** `JSON.parse` behind the line cap and the nesting cap; a refusal says which. */
export function parseCappedJson(text: string, maxChars: number, maxDepth: number): JsonRead {
  if (text.length > maxChars) return { error: `${text.length} characters, over the cap of ${maxChars}` };
  if (nestsDeeperThan(text, maxDepth)) return { error: `JSON nested deeper than ${maxDepth} levels` };
  try {
    return { value: JSON.parse(text) };
  } catch {
    return { error: "not JSON" };
  }
}
