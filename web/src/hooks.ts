import { useEffect, useState } from "preact/hooks";
import { getJson } from "./api";
import type { Agents } from "./types";

/** A value that follows `value` once it has stopped changing for `ms`. */
export function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = window.setTimeout(() => setSettled(value), ms);
    return () => window.clearTimeout(timer);
  }, [value, ms]);
  return settled;
}

/** The current time, refreshed every `ms`, so relative times stay true without a reload. */
export function useNow(ms = 15_000): number {
  const [now, setNow] = useState(Date.now);
  useEffect(() => {
    const timer = window.setInterval(() => setNow(Date.now()), ms);
    return () => window.clearInterval(timer);
  }, [ms]);
  return now;
}

let agentsOnce: Promise<Agents> | undefined;

/** The gateway's agents, fetched once per page load. */
export function useAgents(): Agents | undefined {
  const [agents, setAgents] = useState<Agents>();
  useEffect(() => {
    agentsOnce ??= getJson<Agents>("/api/agents");
    agentsOnce.then(setAgents, () => {
      agentsOnce = undefined;
    });
  }, []);
  return agents;
}

/**
 * GET `path` as JSON, again whenever `path` or `tick` changes; an answer to an older request is dropped. The
 * last answer stays shown while the next one loads, and an error is kept until a request succeeds.
 */
export function useJson<T>(path: string, tick = 0): { data: T | undefined; error: string } {
  const [data, setData] = useState<T>();
  const [error, setError] = useState("");
  useEffect(() => {
    let cancelled = false;
    getJson<T>(path).then(
      (result) => {
        if (cancelled) return;
        setData(result);
        setError("");
      },
      (caught: Error) => {
        if (!cancelled) setError(caught.message);
      },
    );
    return () => {
      cancelled = true;
    };
  }, [path, tick]);
  return { data, error };
}
