/** `sessiond/gateway`: the HTTP/WebSocket gateway around an engine. */
export * from "../gateway/index.js";
