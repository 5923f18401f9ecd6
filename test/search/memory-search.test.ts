import { MemoryStore } from "../../src/store/memory/memory-store.js";
import { runSearchContract } from "./search-contract.js";

runSearchContract("memory", async () => new MemoryStore());
