import { SessiondError } from "../model/errors.js";
import { mapAccounts } from "./account-map.js";
import { mapAgents } from "./agent-map.js";
import type { ImportLimits } from "./limits.js";
import { readCrabtalk } from "./readers/crabtalk.js";
import { readNanobot } from "./readers/nanobot.js";
import { readOpenclaw } from "./readers/openclaw.js";
import { readPicoclaw } from "./readers/picoclaw.js";
import { readZeroclaw } from "./readers/zeroclaw.js";
import { SourceFiles } from "./source-files.js";
import type { ImportSource, SourceRead } from "./types.js";

export interface ReadOptions {
  /**
   * The agent for systems whose files name none (ZeroClaw, nanobot, PicoClaw), and the one OpenClaw's
   * `main` and CrabTalk's `crab` become; default `main`.
   */
  agent?: string;
  /**
   * Peer agents given to sessiond agents (`{work: "main"}`), applied after the peer's default agent has
   * become `agent`.
   */
  agentMap?: Readonly<Record<string, string>>;
  /** Peer bot accounts given the account sessiond's channel names them by (`{"telegram:default": "123456789"}`). */
  accountMap?: Readonly<Record<string, string>>;
  /** Caps on what is read (defaults: DEFAULT_IMPORT_LIMITS). */
  limits?: Partial<ImportLimits>;
}

/** Reads another system's sessions from disk; never writes there. */
export function readSource(source: ImportSource, path: string, options: ReadOptions = {}): SourceRead {
  const read = readPeer(source, path, options);
  if (options.agentMap) mapAgents(read, options.agentMap, options.agent ?? "main");
  if (options.accountMap) mapAccounts(read, options.accountMap, path);
  return read;
}

function readPeer(source: ImportSource, path: string, options: ReadOptions): SourceRead {
  let files: SourceFiles;
  try {
    files = new SourceFiles(path, options.limits);
  } catch {
    throw new SessiondError("INVALID_ARGUMENT", `${path} does not exist`);
  }
  const agent = options.agent ?? "main";
  switch (source) {
    case "crabtalk":
      return readCrabtalk(files, path, agent);
    case "zeroclaw":
      return readZeroclaw(files, path, agent);
    case "openclaw":
      return readOpenclaw(files, path, agent);
    case "nanobot":
      return readNanobot(files, path, agent);
    case "picoclaw":
      return readPicoclaw(files, path, agent);
    default: {
      const unknown: string = source;
      throw new SessiondError("INVALID_ARGUMENT", `unknown import source ${JSON.stringify(unknown)}`);
    }
  }
}
