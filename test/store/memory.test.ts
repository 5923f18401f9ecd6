import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { runStoreContract } from "./contract.js";

runStoreContract({ name: "memory", persistent: false, open: async () => new MemoryStore() });
