/** `1 session`, `2 sessions`, `1 entry`, `3 entries`, `2 keys`: a count with its noun, singular only for one. */
export function plural(
  n: number,
  one: string,
  many = /[^aeiou]y$/.test(one) ? `${one.slice(0, -1)}ies` : `${one}s`,
): string {
  return `${n} ${n === 1 ? one : many}`;
}
