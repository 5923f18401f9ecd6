import { parentPort, workerData } from "node:worker_threads";
import { DataVersion, WriterSignals } from "./data-version.js";
import { openDatabase } from "./sqlite-sql.js";
import { SqliteWriter } from "./sqlite-writer.js";
import {
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

async function answer(w: SqliteWriter, request: WriterRequest): Promise<unknown> {
  switch (request.op) {
    case "commit":
      return w.commit(request.groups, request.durable, true).map(sendOutcome);
    case "sync":
      return w.sync();
    case "prune":
      return w.prune(request.before);
    case "backfill":
      return w.backfillStep(request.sessions);
    case "indexAll":
      return w.indexAll();
    case "stats":
      return { fsyncs: w.walSync?.completed ?? 0, checkpoints: w.checkpointer?.completed ?? 0 };
    case "close":
      await w.close(request.failed);
      w.db.close();
      return undefined;
  }
}

// One request at a time, in order: a commit never starts while an earlier one (or its fsync) is running.
let queue: Promise<void> = Promise.resolve();
port.on("message", (message: { id: number; request: WriterRequest }) => {
  queue = queue.then(async () => {
    try {
      if (!writer) throw opening;
      post({ id: message.id, value: await answer(writer, message.request) });
    } catch (error) {
      post({ id: message.id, error: sendError(error) });
    }
    if (message.request.op === "close") port.close();
  });
});
