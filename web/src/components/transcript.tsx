import type { ComponentChildren } from "preact";
import { absoluteTime, count, entryTime } from "../format";
import type { Entry, ToolCall } from "../types";
import { LongText } from "./long-text";

type CompactionEntry = Extract<Entry, { type: "compaction" }>;

/** What a message of the transcript offers besides its text (fork and rewind buttons). */
export type EntryActions = (entry: Entry) => ComponentChildren;

/**
 * Entries in order. The entries a compaction summarised fold into it (expandable), so the transcript reads
 * as the model now sees it while nothing is hidden for good.
 */
export function Transcript({
  entries,
  highlight,
  actions,
}: {
  entries: Entry[];
  highlight?: string | undefined;
  actions?: EntryActions | undefined;
}) {
  const folded = foldIntoCompactions(entries);
  const top = summariesFirst(entries.filter((entry) => !folded.owner.has(entryName(entry))));
  if (top.length === 0) return <p class="muted empty">No entries yet.</p>;
  let generation = "";
  return (
    <ol class="transcript">
      {top.map((entry) => {
        const divider = generation !== "" && entry.sessionId !== generation;
        generation = entry.sessionId;
        return (
          <>
            {divider && (
              <li class="generation" key={`g-${entry.sessionId}`}>
                Next generation
              </li>
            )}
            <EntryView
              key={entryName(entry)}
              entry={entry}
              folded={folded.children.get(entryName(entry)) ?? []}
              highlight={highlight}
              actions={actions}
            />
          </>
        );
      })}
    </ol>
  );
}

/** Each compaction moves up to where the part it keeps starts: it reads in place of what it summarised. */
function summariesFirst(entries: Entry[]): Entry[] {
  const ordered: Entry[] = entries.filter((e) => e.type !== "compaction");
  for (const c of entries) {
    if (c.type !== "compaction") continue;
    const at = ordered.findIndex((e) => e.sessionId === c.sessionId && e.seq >= c.firstKeptSeq);
    if (at === -1) ordered.push(c);
    else ordered.splice(at, 0, c);
  }
  return ordered;
}

/** Each entry a loaded compaction covers goes under the latest compaction (of its generation) covering it. */
function foldIntoCompactions(entries: Entry[]): { owner: Set<string>; children: Map<string, Entry[]> } {
  const compactions = entries.filter((e): e is CompactionEntry => e.type === "compaction");
  const owner = new Set<string>();
  const children = new Map<string, Entry[]>();
  for (const entry of entries) {
    let cover: CompactionEntry | undefined;
    for (const c of compactions) {
      if (
        c.sessionId === entry.sessionId &&
        c.seq !== entry.seq &&
        entry.seq >= c.fromSeq &&
        entry.seq <= c.throughSeq
      )
        cover = c;
    }
    if (!cover) continue;
    owner.add(entryName(entry));
    const list = children.get(entryName(cover)) ?? [];
    list.push(entry);
    children.set(entryName(cover), list);
  }
  return { owner, children };
}

/**
 * How a search hit names an entry (its generation's id and its seq), and how the transcript keys it: a
 * fork's or rewound generation's inherited entries keep their ids, so with earlier generations shown one
 * id can stand twice.
 */
const entryName = (entry: Entry): string => `${entry.sessionId}:${entry.seq}`;

function EntryView({
  entry,
  folded,
  highlight,
  actions,
}: {
  entry: Entry;
  folded: Entry[];
  highlight?: string | undefined;
  actions?: EntryActions | undefined;
}) {
  const highlighted = highlight === entryName(entry);
  const time = (
    <time class="muted" dateTime={new Date(entry.ts).toISOString()} title={absoluteTime(entry.ts)}>
      #{entry.seq} · {entryTime(entry.ts)}
    </time>
  );
  switch (entry.type) {
    case "message":
      return (
        <li
          class={`entry message role-${entry.role}${highlighted ? " highlighted" : ""}`}
          data-type="message"
          data-role={entry.role}
          data-entry={entryName(entry)}
          aria-current={highlighted ? "true" : undefined}
        >
          <div class="entry-head">
            <span class="role">{entry.role}</span>
            {entry.sender && (
              <span class="sender" title={entry.sender.id}>
                {entry.sender.name ?? entry.sender.username ?? entry.sender.id}
              </span>
            )}
            {time}
            {actions?.(entry)}
          </div>
          {entry.toolCalls && entry.toolCalls.length > 0 && <ToolRecap calls={entry.toolCalls} />}
          <LongText class="content" text={entry.content} />
        </li>
      );
    case "compaction":
      return (
        <li class="entry compaction" data-type="compaction">
          <div class="entry-head">
            <span class="role">compaction</span>
            <span>
              Summarised #{entry.fromSeq}–#{entry.throughSeq}: {count(entry.tokensBefore)} →{" "}
              {count(entry.tokensAfter)} tokens by {entry.summarizer}
              {entry.model ? ` (${entry.model})` : ""}
            </span>
            {time}
          </div>
          {/* Opened when it holds the entry a search hit points at. */}
          <details open={folded.some((child) => entryName(child) === highlight) || undefined}>
            <summary>
              Summary{folded.length > 0 ? ` and the ${folded.length} entries it replaced` : ""}
            </summary>
            <LongText class="content summary" text={entry.summary} />
            {folded.length > 0 && (
              <ol class="transcript folded">
                {folded.map((child) => (
                  <EntryView key={entryName(child)} entry={child} folded={[]} highlight={highlight} />
                ))}
              </ol>
            )}
          </details>
        </li>
      );
    case "reset":
      return (
        <li class="entry divider reset" data-type="reset">
          <span>Session reset ({entry.cause})</span>
          {time}
        </li>
      );
    case "note":
      return (
        <li class={`entry note level-${entry.level ?? "info"}`} data-type="note">
          <div class="entry-head">
            <span class="role">note</span>
            {entry.code && <code>{entry.code}</code>}
            {time}
          </div>
          <LongText class="content" text={entry.text} />
        </li>
      );
    case "title":
      return (
        <li class="entry divider" data-type="title">
          <span>Title: {entry.title}</span>
          {time}
        </li>
      );
    case "usage":
      return (
        <li class="entry divider" data-type="usage">
          <span>
            Usage{entry.model ? ` (${entry.model})` : ""}: {entry.inputTokens ?? "?"} in,{" "}
            {entry.outputTokens ?? "?"} out
            {entry.costUsd !== undefined ? `, $${entry.costUsd.toFixed(4)}` : ""}
          </span>
          {time}
        </li>
      );
  }
}

function ToolRecap({ calls }: { calls: ToolCall[] }) {
  return (
    <ul class="tools" aria-label="Tool calls">
      {calls.map((call, i) => (
        <li key={`${call.id}-${i}`} class={call.id === "failed" ? "failed" : ""}>
          <code>
            {call.name}(
            {Object.entries(call.arguments)
              .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
              .join(", ")}
            )
          </code>
          {call.id === "failed" && <span class="badge badge-attention">failed</span>}
        </li>
      ))}
    </ul>
  );
}
