/** `sessiond/context`: context assembly, windowing, redaction, tool-call recap and token counts. */
export * from "../context/index.js";
