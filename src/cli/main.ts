#!/usr/bin/env node
import { nodeTooOld } from "../model/node-version.js";
import { processIo } from "./io.js";
import { run } from "./program.js";

const tooOld = nodeTooOld(process.versions.node, process.execPath);
if (tooOld !== undefined) {
  process.stderr.write(`error: ${tooOld}\n`);
  process.exit(1);
}

// `sessiond sessions list | head` closes the pipe early; that is not an error worth a stack trace.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
  throw error;
});

process.exitCode = await run(process.argv.slice(2), processIo());
