import { useEffect, useState } from "preact/hooks";

interface Health {
  status: string;
  store?: string;
  fallback?: { configured: string; code: string; reason: string };
}

/** GoClaw's in-memory fallback is loud: while the gateway runs on it, every page says so. */
export function StoreBanner() {
  const [health, setHealth] = useState<Health | undefined>();
  useEffect(() => {
    // /health answers 503 while degraded (for load balancers); its body is what the banner shows.
    fetch("/health")
      .then((res) => res.json() as Promise<Health>)
      .then(setHealth, () => setHealth(undefined));
  }, []);
  const fallback = health?.status === "degraded" ? health.fallback : undefined;
  if (!fallback) return null;
  return (
    <div class="banner-degraded" role="alert">
      <strong>Running on the in-memory store.</strong> The {fallback.configured} store could not be opened (
      {fallback.code}: {fallback.reason}). Every session is lost when the gateway stops.
    </div>
  );
}
