import { useEffect, useState } from "preact/hooks";

interface ChannelState {
  channel: string;
  state: string;
  since: string;
  error?: string;
  failures: number;
}

interface Health {
  status: string;
  store?: string;
  fallback?: { configured: string; code: string; reason: string };
  channels?: ChannelState[];
}

/**
 * What the operator must know on every page: GoClaw's in-memory fallback (loud: nothing is kept), and
 * chat channels the gateway cannot reach (retried in the background; the rest of the gateway works).
 */
export function StoreBanner() {
  const [health, setHealth] = useState<Health | undefined>();
  useEffect(() => {
    // /health answers 503 while degraded (for load balancers); its body is what the banner shows.
    const load = () =>
      fetch("/health")
        .then((res) => res.json() as Promise<Health>)
        .then(setHealth, () => setHealth(undefined));
    load();
    const timer = window.setInterval(load, 15_000);
    return () => window.clearInterval(timer);
  }, []);
  const fallback = health?.status === "degraded" ? health.fallback : undefined;
  const down = (health?.channels ?? []).filter((c) => c.state !== "up" && c.state !== "stopped");
  return (
    <>
      {fallback && (
        <div class="banner-degraded" role="alert">
          <strong>Running on the in-memory store.</strong> The {fallback.configured} store could not be opened
          ({fallback.code}: {fallback.reason}). Every session is lost when the gateway stops.
        </div>
      )}
      {down.map((c) => (
        <div class="banner-degraded" role="status" key={c.channel} data-testid="channel-down">
          <strong>
            Channel {c.channel}: {c.state}.
          </strong>{" "}
          {c.error ? `${c.error} ` : ""}
          {c.failures > 0 ? `${c.failures} failed ${c.failures === 1 ? "try" : "tries"}; ` : ""}
          retried in the background. Everything else works.
        </div>
      ))}
    </>
  );
}
