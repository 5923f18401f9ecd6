/** `sessiond/import`: reading the peers' session files and importing them. */
export { type ImportOptions, type ImportReport, importSessions } from "../import/importer.js";
export { type ReadOptions, readSource } from "../import/read-source.js";
export { IMPORT_SOURCES, type ImportProblem, type ImportSource, type SourceRead } from "../import/types.js";
