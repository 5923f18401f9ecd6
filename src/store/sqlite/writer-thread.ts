import { parentPort, workerData } from "node:worker_threads";
import { INLINE_SYNC_MAX_BATCH } from "../group-commit.js";
import { DataVersion, WriterSignals } from "./data-version.js";
import { openDatabase } from "./sqlite-sql.js";
import { SqliteWriter } from "./sqlite-writer.js";
import {
  type SentOutcome,
  sendError,
  sendOutcome,
  type WriterInit,
  type WriterMessage,
  type WriterRequest,
} from "./writer-protocol.js";

/**
 * The writer thread of a SQLite store (writer-client.ts starts it): every statement that writes, the
 * search indexing, the WAL's fsyncs and the checkpoints run here, on a connection of its own, so the
 * event loop of the process never waits on the disk. Requests are answered in the order they came.
 */
const port = parentPort;
if (!port) throw new Error("writer-thread.ts runs as a worker thread");
const init = workerData as WriterInit;
const post = (message: WriterMessage) => port.postMessage(message);

let writer: SqliteWriter | undefined;
let opening: unknown;
try {
  const db = openDatabase(init.path, init.durability, init);
  writer = new SqliteWriter(
    db,
    {
      path: init.path,
      durability: init.durability,
      foldThreshold: init.foldThreshold,
      journalMinBatch: init.journalMinBatch,
      idleFoldMs: init.idleFoldMs,
      checkpointIntervalMs: init.checkpointIntervalMs,
      signals: new WriterSignals(init.signals),
      onFailure: (error) => post({ failure: sendError(error) }),
    },
    new DataVersion(db, true),
  );
} catch (error) {
  opening = error;
}

/** The answer to any request but a commit, in the order they came. */
async function answer(w: SqliteWriter, request: Exclude<WriterRequest, { op: "commit" }>): Promise<unknown> {
  switch (request.op) {
    case "sync":
      return w.sync();
    case "prune":
      return w.prune(request.before);
    case "backfill":
      return w.backfillStep(request.sessions);
    case "indexAll":
      return w.indexAll();
    case "scrub":
      return w.scrub(request.keys, request.senders);
    case "stats":
      return { fsyncs: w.wal?.fsyncs ?? 0, checkpoints: w.wal?.checkpoints ?? 0 };
    case "close":
      await w.close(request.failed);
      w.db.close();
      return undefined;
  }
}

/**
 * A commit runs at once, in the order the batches came, and is answered once the WAL's fsync covers it
 * (a big batch's on the thread pool: requests that come meanwhile are answered meanwhile).
 */
function commit(w: SqliteWriter, id: number, request: Extract<WriterRequest, { op: "commit" }>): void {
  let outcomes: SentOutcome[];
  try {
    outcomes = w.commit(request.groups, request.durable).map(sendOutcome);
  } catch (error) {
    post({ id, error: sendError(error) });
    return;
  }
  if (!request.durable) {
    post({ id, value: outcomes });
    return;
  }
  // A small batch (one writer appending in turn) has nothing to wait beside: fsynced here, without the
  // thread pool's round trip.
  if (request.groups.length < INLINE_SYNC_MAX_BATCH) {
    try {
      w.syncNow();
      post({ id, value: outcomes });
    } catch (error) {
      post({ id, error: sendError(error) });
    }
    return;
  }
  w.durableBarrier().then(
    () => post({ id, value: outcomes }),
    (error: unknown) => post({ id, error: sendError(error) }),
  );
}

port.on("message", (message: string) => {
  const space = message.indexOf(" ");
  const id = Number(message.slice(0, space));
  const request = JSON.parse(message.slice(space + 1)) as WriterRequest;
  if (!writer) {
    post({ id, error: sendError(opening) });
    if (request.op === "close") port.close();
    return;
  }
  if (request.op === "commit") {
    commit(writer, id, request);
    return;
  }
  const w = writer;
  answer(w, request)
    .then(
      (value) => post({ id, value }),
      (error: unknown) => post({ id, error: sendError(error) }),
    )
    .finally(() => {
      if (request.op === "close") port.close();
    });
});
