import { useEffect, useState } from "preact/hooks";
import { getJson, postJson } from "../api";
import { relativeTime } from "../format";
import { useNow } from "../hooks";

interface RunningTurn {
  id: string;
  key: string;
  startedAt: number;
  lastEventAt: number;
  events: number;
  stuck: boolean;
}

/** The turns running now (`GET /api/inspect`), stuck ones flagged, each with an Abort button. */
export function RunningTurns() {
  const tick = useNow(5_000);
  const [turns, setTurns] = useState<RunningTurn[]>([]);
  const [error, setError] = useState("");
  const [refresh, setRefresh] = useState(0);
  useEffect(() => {
    let cancelled = false;
    getJson<{ running?: RunningTurn[] }>("/api/inspect?limit=1").then(
      (inspect) => {
        if (cancelled) return;
        setTurns(inspect.running ?? []);
        setError("");
      },
      (caught: Error) => {
        if (!cancelled) setError(caught.message);
      },
    );
    return () => {
      cancelled = true;
    };
  }, [tick, refresh]);

  const abort = async (id: string) => {
    try {
      await postJson(`/api/turns/${encodeURIComponent(id)}/abort`);
    } catch (caught) {
      setError((caught as Error).message);
    }
    setRefresh((n) => n + 1);
  };

  return (
    <section class="card" aria-labelledby="running-title">
      <h2 id="running-title">Running turns</h2>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {turns.length === 0 ? (
        <p class="muted">No turn is running.</p>
      ) : (
        <ul class="running-turns">
          {turns.map((turn) => (
            <li key={turn.id} data-turn={turn.id}>
              <code>{turn.key}</code> started {relativeTime(turn.startedAt, tick)}, last runtime event{" "}
              {relativeTime(turn.lastEventAt, tick)}{" "}
              {turn.stuck && (
                <span class="badge badge-attention" title="No runtime event for turns.stuck_after">
                  Stuck
                </span>
              )}{" "}
              <button type="button" onClick={() => abort(turn.id)}>
                Abort
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
