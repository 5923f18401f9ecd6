import { type JsonlIndexProgress, JsonlStore } from "../../src/store/jsonl/jsonl-store.js";

/** Opens the store, keeping its rebuild's reports; `rebuilt` settles at the first that says it is done. */
export function openWatched(dir: string): {
  store: JsonlStore;
  reports: JsonlIndexProgress[];
  rebuilt: Promise<void>;
} {
  const reports: JsonlIndexProgress[] = [];
  let done: () => void = () => undefined;
  const rebuilt = new Promise<void>((resolve) => {
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
  return { store, reports, rebuilt };
}

/** Opens the store and waits until its rebuild reports it is done (or it had nothing to rebuild). */
export async function openRebuilt(
  dir: string,
): Promise<{ store: JsonlStore; reports: JsonlIndexProgress[] }> {
  const { store, reports, rebuilt } = openWatched(dir);
  if (store.searchProgress().indexing) await rebuilt;
  return { store, reports };
}
