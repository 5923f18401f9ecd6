import type { SharedConversation } from "../shares/share.js";

const ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

/** The page's only style, inline: the page loads nothing else (its CSP allows nothing else). */
const STYLE = `body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f}
h1{font-size:1.4rem;margin:0 0 .25rem}.meta{color:#666;font-size:.85rem;margin-bottom:1.5rem}
.msg{margin:0 0 1rem;padding:.6rem .9rem;border-radius:.6rem;white-space:pre-wrap;overflow-wrap:anywhere}
.user{background:#e8f0fe}.assistant{background:#f3f3f3}.role{font-weight:600;font-size:.8rem;color:#555}`;

/** Content-Security-Policy of the page: no script, no request of any kind, inline style only. */
export const SHARE_PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** A plain, self-contained page of a shared conversation; every text escaped. */
export function shareHtml(view: SharedConversation): string {
  const title = escapeHtml(view.title || "Shared conversation");
  const when = new Date(view.sharedAt).toISOString().replace("T", " ").slice(0, 16);
  const messages = view.messages
    .map(
      (m) =>
        `<div class="msg ${m.role}"><div class="role">${m.role === "user" ? "User" : "Assistant"}</div>${escapeHtml(m.content)}</div>`,
    )
    .join("\n");
  const truncated = view.truncated ? `<p class="meta">Earlier messages are not shown.</p>\n` : "";
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${title}</title><style>${STYLE}</style></head>
<body><h1>${title}</h1><p class="meta">Shared conversation, read-only, as it was at ${when} UTC.</p>
${truncated}${messages}
</body></html>
`;
}

export const NOT_FOUND_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="robots" content="noindex"><title>Not found</title></head>
<body><p>This share link does not exist or was revoked.</p></body></html>
`;
