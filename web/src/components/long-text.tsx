import { useState } from "preact/hooks";

/** Characters shown of a long text until the reader asks for all of it: a 1 MB message stays one screen. */
export const SHOWN_CHARS = 4096;

/**
 * A text cut to its first few KB, with a button that shows the rest. Cut at a line break near the limit
 * when there is one, so the part shown ends cleanly.
 */
export function LongText({ text, class: className }: { text: string; class: string }) {
  const [all, setAll] = useState(false);
  if (all || text.length <= SHOWN_CHARS) return <div class={className}>{text}</div>;
  const newline = text.lastIndexOf("\n", SHOWN_CHARS);
  const cut = newline > SHOWN_CHARS / 2 ? newline : SHOWN_CHARS;
  return (
    <div class={`${className} long`}>
      {text.slice(0, cut)}
      <span class="muted">…</span>
      <div>
        <button type="button" class="ghost show-all" onClick={() => setAll(true)}>
          Show all ({sizeOf(text.length)})
        </button>
      </div>
    </div>
  );
}

function sizeOf(chars: number): string {
  if (chars < 1024 * 1024) return `${Math.round(chars / 1024).toLocaleString("en-US")} K characters`;
  return `${(chars / (1024 * 1024)).toFixed(1)} M characters`;
}
