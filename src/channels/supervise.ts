import { pause } from "./deliver.js";
import type { ChannelStatus } from "./status.js";
import type { ChannelLogger } from "./types.js";

export interface SuperviseOptions {
  /** First wait after a failed start; it doubles per try up to `maxBackoffMs`. Default 1 s. */
  backoffMs?: number;
  /** Default 60 s. */
  maxBackoffMs?: number;
  /** How to wait (tests pass one that records the waits). */
  wait?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export interface Supervised {
  /** Settles with the first try: undefined when the channel came up, else the one line saying why not. */
  first: Promise<string | undefined>;
  /** Resolves once the channel is up or the supervision was stopped. */
  done: Promise<void>;
}

/**
 * Starts one channel's connection and, while its platform cannot be reached, tries again with a doubling
 * backoff until it can or `signal` aborts. A platform's outage never throws out of here: the gateway runs on.
 */
export function supervise(
  channel: string,
  start: () => Promise<void>,
  status: ChannelStatus,
  logger: ChannelLogger,
  signal: AbortSignal,
  options: SuperviseOptions = {},
): Supervised {
  const wait = options.wait ?? pause;
  const max = options.maxBackoffMs ?? 60_000;
  let reportFirst: (line: string | undefined) => void = () => {};
  const first = new Promise<string | undefined>((resolve) => {
    reportFirst = resolve;
  });
  status.set(channel, "starting");
  const done = (async () => {
    let backoff = options.backoffMs ?? 1000;
    for (let attempt = 1; !signal.aborted; attempt++) {
      try {
        await start();
        status.set(channel, "up");
        if (attempt > 1) logger.info({ channel, attempt }, "channel reachable again: started");
        reportFirst(undefined);
        return;
      } catch (error) {
        if (signal.aborted) break;
        const message = error instanceof Error ? error.message : String(error);
        status.set(channel, "retrying", message);
        logger.warn({ channel, attempt, retryInMs: backoff, err: message }, "channel cannot start: retrying");
        reportFirst(`channel ${channel} cannot start yet (${message}); retrying in the background`);
      }
      await wait(backoff, signal);
      backoff = Math.min(backoff * 2, max);
    }
    status.set(channel, "stopped");
    reportFirst(undefined);
  })();
  return { first, done };
}
