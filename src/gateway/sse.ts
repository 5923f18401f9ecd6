import type { Context } from "hono";
import { type SSEStreamingApi, streamSSE } from "hono/streaming";

/**
 * An SSE reply. Hono's `streamSSE` always answers `Connection: keep-alive`, which kept the socket open
 * after the stream even when the client sent `Connection: close`; the client's `close` is honoured here.
 */
export function sseReply(c: Context, run: (stream: SSEStreamingApi) => Promise<void>): Response {
  const response = streamSSE(c, run);
  if (/(^|,)\s*close\s*(,|$)/i.test(c.req.header("connection") ?? ""))
    response.headers.set("connection", "close");
  return response;
}
