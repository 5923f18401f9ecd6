/** `sessiond/export`: sessions as JSON, CrabTalk JSONL or Markdown. */
export * from "../export/index.js";
