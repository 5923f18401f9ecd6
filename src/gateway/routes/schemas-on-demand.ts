/**
 * The zod schemas of the routes the gateway mounts at start-up (turns, the OpenAI-compatible API, the
 * dashboard's reads), loaded by their first request: `sessiond serve` gets ready without zod.
 */
let turn: Promise<typeof import("./turn-operations.js")> | undefined;
let openAi: Promise<typeof import("./openai-operations.js")> | undefined;
let dashboard: Promise<typeof import("./dashboard-operations.js")> | undefined;

export const turnSchemas = () => (turn ??= import("./turn-operations.js"));
export const openAiSchemas = () => (openAi ??= import("./openai-operations.js"));
export const dashboardSchemas = () => (dashboard ??= import("./dashboard-operations.js"));
