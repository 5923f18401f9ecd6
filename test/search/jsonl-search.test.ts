import { JsonlStore } from "../../src/store/jsonl/jsonl-store.js";
import { runSearchContract } from "./search-contract.js";

runSearchContract("jsonl", async (dir) => new JsonlStore({ path: dir, onProblem: () => undefined }));
