/** `sessiond/import`: reading the peers' session files and importing them. */
export { parseAgentMap } from "../import/agent-map.js";
export { type ImportOptions, type ImportReport, importSessions } from "../import/importer.js";
export { DEFAULT_IMPORT_LIMITS, type ImportLimits } from "../import/limits.js";
export type { ImportAssumption } from "../import/plan-keys.js";
export { type ReadOptions, readSource } from "../import/read-source.js";
export { IMPORT_SOURCES, type ImportProblem, type ImportSource, type SourceRead } from "../import/types.js";
