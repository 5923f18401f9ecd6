import { existsSync } from "node:fs";
import { SessiondError } from "../model/errors.js";
import { readCrabtalk } from "./readers/crabtalk.js";
import { readNanobot } from "./readers/nanobot.js";
import { readOpenclaw } from "./readers/openclaw.js";
import { readPicoclaw } from "./readers/picoclaw.js";
import { readZeroclaw } from "./readers/zeroclaw.js";
import type { ImportSource, SourceRead } from "./types.js";

export interface ReadOptions {
  /**
   * The agent for systems whose files name none (ZeroClaw, nanobot, PicoClaw), and the one OpenClaw's
   * `main` and CrabTalk's `crab` become; default `main`.
   */
  agent?: string;
}

/** Reads another system's sessions from disk; never writes there. */
export function readSource(source: ImportSource, path: string, options: ReadOptions = {}): SourceRead {
  if (!existsSync(path)) throw new SessiondError("INVALID_ARGUMENT", `${path} does not exist`);
  const agent = options.agent ?? "main";
  switch (source) {
    case "crabtalk":
      return readCrabtalk(path, agent);
    case "zeroclaw":
      return readZeroclaw(path, agent);
    case "openclaw":
      return readOpenclaw(path, agent);
    case "nanobot":
      return readNanobot(path, agent);
    case "picoclaw":
      return readPicoclaw(path, agent);
    default: {
      const unknown: string = source;
      throw new SessiondError("INVALID_ARGUMENT", `unknown import source ${JSON.stringify(unknown)}`);
    }
  }
}
