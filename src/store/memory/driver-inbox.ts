import type { InboxItem, InboxState } from "../../model/inbox.js";
import type { DriverInbox, InboxWrite } from "../driver.js";
import { MemoryInbox } from "./inbox.js";

/** The memory driver's inbox: items in a `MemoryInbox`, changed only by the groups the driver commits. */
export class MemoryDriverInbox implements DriverInbox {
  private readonly items = new MemoryInbox();

  get(id: string): InboxItem | undefined {
    return copy(this.items.peek(id));
  }

  stateOf(id: string): InboxState | undefined {
    return this.items.peek(id)?.state;
  }

  byDedupeKey(dedupeKey: string): InboxItem | undefined {
    return copy(this.items.peekDedupe(dedupeKey));
  }

  unfinished(): InboxItem[] {
    return this.items.all().filter((i) => i.state === "pending" || i.state === "running");
  }

  prune(before: number): number {
    return this.items.pruneNow(before);
  }

  apply(write: InboxWrite): void {
    if (write.kind === "admit") {
      const { item } = write;
      if (this.items.peek(item.id)) return;
      if (item.dedupeKey !== undefined && this.items.peekDedupe(item.dedupeKey)) return;
      // Made for this write (store-inbox.ts admitWrite: the envelope read back from its JSON when first read),
      // the caller's apart (inbox-operations.ts): kept as it is.
      this.items.adopt(item);
      return;
    }
    this.items.transitionNow(write.id, write.state, write.at, write.outcome);
  }
}

function copy(item: InboxItem | undefined): InboxItem | undefined {
  return item && structuredClone(item);
}
