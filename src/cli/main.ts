#!/usr/bin/env node
import { processIo } from "./io.js";
import { run } from "./program.js";

// `sessiond sessions list | head` closes the pipe early; that is not an error worth a stack trace.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(process.exitCode ?? 0);
  throw error;
});

process.exitCode = await run(process.argv.slice(2), processIo());
