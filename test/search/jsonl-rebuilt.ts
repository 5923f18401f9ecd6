import { type JsonlIndexProgress, JsonlStore } from "../../src/store/jsonl/jsonl-store.js";

/** Opens the store and waits until its rebuild reports it is done (or it had nothing to rebuild). */
export async function openRebuilt(
  dir: string,
): Promise<{ store: JsonlStore; reports: JsonlIndexProgress[] }> {
  const reports: JsonlIndexProgress[] = [];
  let done: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => {
    done = resolve;
  });
  const store = new JsonlStore({
    path: dir,
    onProblem: () => undefined,
    onIndexProgress: (p) => {
      reports.push(p);
      if (!p.indexing) done();
    },
  });
  if (store.searchProgress().indexing) await finished;
  return { store, reports };
}
