import { Readable } from "node:stream";
import { Hono } from "hono";
import type { SnapshotSource } from "../../store/jsonl/backup-stream.js";
import { HttpError } from "../errors.js";
import type { GatewayEnv, RouteDeps } from "../types.js";

/**
 * `GET /api/store/backup`: a consistent copy of the gateway's JSONL store, as a gzipped tar streamed while
 * writes go on (store/jsonl/backup-stream.ts). `sessiond backup` asks a running gateway for it, since only
 * the process that writes the files can name one instant of them. Other stores are backed up by their
 * own means, which this says.
 */
export function storeBackupRoutes(deps: RouteDeps): Hono<GatewayEnv> {
  const app = new Hono<GatewayEnv>();
  /** One copy at a time: each holds a folder of links and a reader of the files. */
  let taking = false;
  app.get("/api/store/backup", async (c) => {
    const store: unknown = deps.engine.store;
    if (!isSnapshotSource(store)) {
      const backend = deps.engine.store.backend;
      throw new HttpError(
        400,
        "INVALID_ARGUMENT",
        backend === "sqlite"
          ? "this gateway's store is SQLite: run sessiond backup <file> on its host (SQLite's online backup)"
          : backend === "postgres"
            ? "this gateway's store is PostgreSQL: back it up with pg_dump"
            : `this gateway's store (${backend}) has no backup over HTTP`,
      );
    }
    const { jsonlBackupStream } = await import("../../store/jsonl/backup-stream.js");
    if (taking)
      throw new HttpError(
        503,
        "STORE_BUSY",
        "a backup of this store is being taken: try again once it is done",
        5,
      );
    // Synchronous: the snapshot is taken (or fails, holding nothing) before another request runs.
    const { stream, takenAt } = jsonlBackupStream(store);
    taking = true;
    stream.on("close", () => {
      taking = false;
    });
    const name = `sessiond-jsonl-${new Date(takenAt).toISOString().replace(/[:.]/g, "-")}.tar.gz`;
    c.header("content-type", "application/gzip");
    c.header("content-disposition", `attachment; filename="${name}"`);
    c.header("cache-control", "no-store");
    return c.body(Readable.toWeb(stream) as ReadableStream<Uint8Array>);
  });
  return app;
}

function isSnapshotSource(store: unknown): store is SnapshotSource {
  return (
    typeof store === "object" &&
    store !== null &&
    "snapshot" in store &&
    typeof (store as { snapshot: unknown }).snapshot === "function"
  );
}
