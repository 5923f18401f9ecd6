/** The marker a cut string ends with. */
export const ELLIPSIS = "…";

/**
 * `text` cut to at most `max` UTF-16 units, the last of which is `…` when anything was cut. Never splits a
 * surrogate pair.
 */
export function truncate(text: string, max: number): string {
  if (text.length <= max) return text;
  if (max <= 0) return "";
  let end = max - ELLIPSIS.length;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, Math.max(0, end))}${ELLIPSIS}`;
}
