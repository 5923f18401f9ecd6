import { type Command, Option } from "commander";
import { plainSnippet } from "../../search/plain-snippet.js";
import type { SearchHit } from "../../search/query.js";
import { searchQueryFrom } from "../../search/query-params.js";
import { searchStore } from "../../search/searchable.js";
import { type GlobalOptions, withEngine } from "../context.js";
import type { CliIo } from "../io.js";
import { shellWord } from "../options.js";

interface SearchOptions extends GlobalOptions {
  json?: boolean;
  agent?: string;
  channel?: string;
  prefix?: string;
  role?: string;
  since?: string;
  until?: string;
  archived?: string;
  limit?: string;
  cursor?: string;
}

const FILTERS = ["agent", "channel", "prefix", "role", "since", "until", "archived", "limit"] as const;

export function registerSearch(program: Command, io: CliIo): void {
  program
    .command("search")
    .description("search what users and agents said, best match first (matches in **bold**)")
    .argument("<query...>", 'the words to find (all of them; "a phrase" in quotes)')
    .option("--json", 'print { "hits": [...], "nextCursor"?: "...", "indexing": false, "complete": true }')
    .option("--agent <id>", "only this agent's sessions")
    .option("--channel <name>", "only sessions on this channel")
    .option("--prefix <key>", "only keys that start with this")
    .addOption(new Option("--role <role>", "only messages of").choices(["user", "assistant"]))
    .option("--since <time>", "only messages at or after (ISO 8601 date or ms)")
    .option("--until <time>", "only messages before (ISO 8601 date or ms)")
    .addOption(
      new Option("--archived <which>", "archived generations").choices(["include", "exclude", "only"]),
    )
    .option("--limit <n>", "hits per page (1-100, default 20)")
    .option("--cursor <cursor>", "the next page: the cursor the previous page printed")
    .action(async (words: string[], _options: unknown, command: Command) => {
      const options = command.optsWithGlobals<SearchOptions>();
      const text = words.join(" ");
      const query = searchQueryFrom(
        text,
        (name) => options[name as keyof SearchOptions] as string | undefined,
      );
      const result = await withEngine(options, io, { readOnly: true }, (engine) =>
        searchStore(engine.store, query),
      );
      if (options.json) {
        io.stdout(`${JSON.stringify(result, null, 2)}\n`);
        return;
      }
      if (result.indexing)
        io.stderr("The search index is still being built: some messages are not found yet.\n");
      if (!result.complete)
        io.stderr("The search took too long and stopped early: more words or a filter find the rest.\n");
      if (result.hits.length === 0) {
        io.stdout(options.cursor ? "No more matches.\n" : "No matches.\n");
        return;
      }
      io.stdout(result.hits.map(hitText).join("\n"));
      if (result.nextCursor !== undefined)
        io.stdout(`\nMore matches: ${nextPageCommand(options, text, result.nextCursor)}\n`);
    });
}

/** A hit as two lines: where it is, and its snippet as plain text with the matches in `**`. */
export function hitText(hit: SearchHit): string {
  const when = new Date(hit.ts).toISOString().slice(0, 16).replace("T", " ");
  const where = `${hit.key}  generation ${hit.generation}${hit.archived ? " (archived)" : ""}  #${hit.seq}  ${hit.role}  ${when}`;
  return `${where}\n  ${plainSnippet(hit.snippet)}\n`;
}

function nextPageCommand(options: SearchOptions, text: string, cursor: string): string {
  const words = ["sessiond"];
  if (options.config !== undefined) words.push("--config", options.config);
  if (options.dataDir !== undefined) words.push("--data-dir", options.dataDir);
  words.push("search", text);
  for (const name of FILTERS) {
    const value = options[name];
    if (value !== undefined) words.push(`--${name}`, value);
  }
  words.push("--cursor", cursor);
  return words.map(shellWord).join(" ");
}
