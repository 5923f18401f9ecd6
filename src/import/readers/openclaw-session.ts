import type { SourceSession } from "../types.js";
import type { OpenclawChat } from "./openclaw-keys.js";
import type { Transcript } from "./openclaw-transcript.js";

/**
 * One OpenClaw transcript as a source session. `title` is the session's label (SessionEntry `label`,
 * 2026.9 `display_name`): it is added after the transcript unless the transcript's last title says it.
 */
export function openclawSession(
  chat: OpenclawChat,
  sessionId: string,
  file: string,
  transcript: Transcript,
  archived: boolean,
  title: string | undefined,
): SourceSession {
  const items = [...transcript.items];
  const label = title?.trim();
  if (label && label !== transcript.title) {
    const ts =
      transcript.items.at(-1)?.kind === "entry"
        ? (transcript.items.at(-1) as { entry: { ts?: number } }).entry.ts
        : undefined;
    items.push({
      kind: "entry",
      entry: {
        type: "title",
        title: label.slice(0, 200),
        by: "openclaw",
        ...(ts !== undefined ? { ts } : {}),
      },
    });
  }
  return {
    key: chat.fallbackKey,
    ...(chat.origin ? { origin: chat.origin } : {}),
    init: { agent: chat.agent, channel: chat.channel, createdBy: chat.peer },
    sourceId: `openclaw:${sessionId}`,
    file,
    items,
    archived,
    ...(transcript.startedAt !== undefined ? { createdAt: transcript.startedAt } : {}),
  };
}
