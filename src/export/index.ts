import type { Entry } from "../model/entry.js";
import type { Session } from "../model/session.js";
import { exportJson } from "./json.js";
import { exportJsonl } from "./jsonl.js";
import { exportMarkdown } from "./markdown.js";
import type { ExportOptions } from "./sessions.js";

export { exportJson } from "./json.js";
export { exportJsonl, exportJsonlFiles, type JsonlFile } from "./jsonl.js";
export { exportMarkdown } from "./markdown.js";
export type { ExportOptions } from "./sessions.js";

export const EXPORT_FORMATS = ["json", "jsonl", "md"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** A key's sessions (any order; the newest is the current one) and their entries in order → a document. */
export type Exporter = (
  sessions: readonly Session[],
  entries: readonly Entry[],
  options?: ExportOptions,
) => string;

export const EXPORTERS: Readonly<Record<ExportFormat, Exporter>> = {
  json: exportJson,
  jsonl: exportJsonl,
  md: exportMarkdown,
};

export function exportSessions(
  format: ExportFormat,
  sessions: readonly Session[],
  entries: readonly Entry[],
  options: ExportOptions = {},
): string {
  return EXPORTERS[format](sessions, entries, options);
}
