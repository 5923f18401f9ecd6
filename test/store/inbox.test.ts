import { MemoryInbox } from "../../src/store/memory/inbox.js";
import { inboxContract } from "./inbox-contract.js";

inboxContract("memory", { open: async () => new MemoryInbox() });
