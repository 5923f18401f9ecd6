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
