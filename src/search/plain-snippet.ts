const ENTITIES: Record<string, string> = {
  "&amp;": "&",
  "&lt;": "<",
  "&gt;": ">",
  "&quot;": '"',
  "&#39;": "'",
};

/** A snippet (escaped HTML) as plain text, for a terminal or a model: each match in `**`, whitespace folded. */
export function plainSnippet(snippet: string): string {
  return snippet
    .replace(/<\/?mark>/g, "**")
    .replace(/&(?:amp|lt|gt|quot|#39);/g, (e) => ENTITIES[e] ?? e)
    .replace(/\s+/g, " ");
}
