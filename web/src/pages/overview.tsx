import { useState } from "preact/hooks";
import { BarChart } from "../components/bar-chart";
import { CostTable } from "../components/cost-table";
import { RunningTurns } from "../components/running-turns";
import { count } from "../format";
import { useJson, useNow } from "../hooks";
import type { HourBucket, Overview } from "../types";

const WINDOWS = [6, 24, 72, 168];
const CHARTS: Array<{ field: keyof Omit<HourBucket, "at">; title: string; summed?: boolean }> = [
  { field: "activeSessions", title: "Active sessions per hour", summed: false },
  { field: "messages", title: "Messages per hour" },
  { field: "tokens", title: "Tokens per hour (estimated)" },
  { field: "compactions", title: "Compactions per hour" },
];

export function OverviewPage() {
  const [hours, setHours] = useState(24);
  // Refreshed every minute; the charts keep their size, so nothing moves when new figures arrive.
  const tick = useNow(60_000);
  const { data, error } = useJson<Overview>(`/api/stats/overview?hours=${hours}`, tick);

  return (
    <section class="page" aria-labelledby="overview-title">
      <div class="chat-head">
        <h1 id="overview-title">Overview</h1>
        <label class="inline">
          <span>Window</span>
          <select value={String(hours)} onChange={(e) => setHours(Number(e.currentTarget.value))}>
            {WINDOWS.map((h) => (
              <option key={h} value={String(h)}>
                Last {h < 48 ? `${h} hours` : `${h / 24} days`}
              </option>
            ))}
          </select>
        </label>
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <div class="tiles">
        <Tile label="Sessions active" value={data?.totals.sessions} />
        <Tile label="Messages" value={data?.totals.messages} />
        <Tile label="Tokens" value={data?.totals.tokens} />
        <Tile label="Compactions" value={data?.totals.compactions} />
      </div>
      {data?.truncated && (
        <p class="muted">
          Busy window: the figures cover the most recently active sessions only (lower bounds).
        </p>
      )}
      <RunningTurns />
      <CostTable since={new Date(tick - hours * 3_600_000).toISOString()} tick={tick} />
      <div class="charts">
        {CHARTS.map((chart) => (
          <BarChart
            key={chart.field}
            title={chart.title}
            summed={chart.summed !== false}
            points={(data?.hours ?? []).map((h) => ({ at: h.at, value: h[chart.field] }))}
          />
        ))}
      </div>
    </section>
  );
}

function Tile({ label, value }: { label: string; value: number | undefined }) {
  return (
    <div class="card tile">
      <span class="muted">{label}</span>
      <strong data-testid={`tile-${label}`}>{value === undefined ? "–" : count(value)}</strong>
    </div>
  );
}
