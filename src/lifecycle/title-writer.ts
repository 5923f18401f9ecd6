import { forSession } from "../ledger/metered-model.js";
import type { Session } from "../model/session.js";
import type { TextModel } from "../model/text-model.js";
import type { Store } from "../store/store.js";
import { withConversation } from "../tracing/spans.js";
import { direct, type InLanes } from "./in-lanes.js";
import { titleFromExchange } from "./titles.js";

/**
 * Titles a session after its first exchange, in the background, once: from the first user and
 * assistant messages, by the model or offline. Set only while the title is still empty.
 */
export class TitleWriter {
  private readonly running = new Map<string, Promise<void>>();

  /** `model` may pick per session (its own model override); undefined: offline titles. */
  constructor(
    private readonly store: Store,
    private readonly model?: TextModel | ((session: Session) => TextModel | undefined),
    private readonly inLanes: InLanes = direct,
  ) {}

  afterTurn(key: string, session: Session): void {
    if (session.title !== "" || session.messageCount < 2 || this.running.has(session.id)) return;
    const work = this.write(key, session).finally(() => this.running.delete(session.id));
    this.running.set(session.id, work);
  }

  /** Waits for titles being written. */
  async drain(): Promise<void> {
    await Promise.all(this.running.values());
  }

  private async write(key: string, session: Session): Promise<void> {
    try {
      const first = await this.store.readEntries(session.id, { limit: 20 });
      const user = first.find((e) => e.type === "message" && e.role === "user");
      const assistant = first.find((e) => e.type === "message" && e.role === "assistant");
      if (user?.type !== "message" || assistant?.type !== "message") return;
      const model = typeof this.model === "function" ? this.model(session) : this.model;
      const title = await forSession(session, "title", () =>
        withConversation(session.id, "title", () =>
          titleFromExchange({ user: user.content, assistant: assistant.content, key }, model),
        ),
      );
      // The model is asked outside the lane (it may be slow); the check and the write hold it, and
      // expectSessionId keeps another process's reset from putting the title on the next generation.
      await this.inLanes([key], async () => {
        const now = await this.store.getSession(key);
        if (!now || now.id !== session.id || now.title !== "") return;
        await this.store.append(key, [{ type: "title", title, by: model ? model.model : "offline" }], {
          expectSessionId: session.id,
        });
      });
    } catch {
      // A title is a convenience: a failure leaves the session untitled, to be tried after a later turn.
    }
  }
}
