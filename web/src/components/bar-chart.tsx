import { count, hourLabel } from "../format";

const WIDTH = 600;
const HEIGHT = 110;
/** Room on the left for the value axis' labels. */
const AXIS = 40;
/** The smallest top of the value axis: one message in an hour is a short bar, not a full one. */
const MIN_AXIS_MAX = 5;

/** The value axis' top: the peak rounded up to 1, 2 or 5 × 10ⁿ, at least MIN_AXIS_MAX. */
export function axisMax(peak: number): number {
  if (peak <= MIN_AXIS_MAX) return MIN_AXIS_MAX;
  const magnitude = 10 ** Math.floor(Math.log10(peak));
  const step = [1, 2, 5, 10].find((m) => m * magnitude >= peak) ?? 10;
  return step * magnitude;
}

/** One small bar chart per series; a table with the same numbers is one click away for screen readers. */
export function BarChart({
  title,
  points,
  summed = true,
}: {
  title: string;
  points: Array<{ at: number; value: number }>;
  /** Whether a total over the hours means something (messages do; active sessions per hour do not). */
  summed?: boolean;
}) {
  const max = Math.max(0, ...points.map((p) => p.value));
  const top = axisMax(max);
  const total = points.reduce((sum, p) => sum + p.value, 0);
  const step = points.length > 0 ? (WIDTH - AXIS) / points.length : WIDTH - AXIS;
  const first = points[0];
  const last = points.at(-1);
  return (
    <figure class="card chart">
      <figcaption>
        {title}{" "}
        <span class="muted">
          {summed ? `· ${count(total)} in all ` : ""}· peak {count(total === 0 ? 0 : max)}
        </span>
      </figcaption>
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT + 1}`}
        role="img"
        aria-label={`${title}: peak ${count(total === 0 ? 0 : max)}`}
      >
        <title>{title}</title>
        <g class="value-axis" data-max={top}>
          <line x1={AXIS} y1="4" x2={AXIS} y2={HEIGHT} class="axis" />
          <line x1={AXIS} y1="4" x2={WIDTH} y2="4" class="grid" />
          <text x={AXIS - 6} y="12" text-anchor="end" class="axis-label">
            {count(top)}
          </text>
          <text x={AXIS - 6} y={HEIGHT} text-anchor="end" class="axis-label">
            0
          </text>
        </g>
        <line x1={AXIS} y1={HEIGHT} x2={WIDTH} y2={HEIGHT} class="axis" />
        {points.map((p, i) => {
          const h = (p.value / top) * (HEIGHT - 4);
          return (
            <rect
              key={p.at}
              x={AXIS + i * step + 1}
              y={HEIGHT - h}
              width={Math.max(1, step - 2)}
              height={h}
              class="bar"
            >
              <title>
                {hourLabel(p.at)}: {count(p.value)}
              </title>
            </rect>
          );
        })}
      </svg>
      <div class="ticks muted" aria-hidden="true">
        <span>{first ? hourLabel(first.at, true) : ""}</span>
        <span>{last ? hourLabel(last.at) : ""}</span>
      </div>
      <details>
        <summary>As a table</summary>
        <table class="mini">
          <thead>
            <tr>
              <th scope="col">Hour</th>
              <th scope="col" class="num">
                Value
              </th>
            </tr>
          </thead>
          <tbody>
            {points
              .filter((p) => p.value > 0)
              .map((p) => (
                <tr key={p.at}>
                  <td>{hourLabel(p.at)}</td>
                  <td class="num">{count(p.value)}</td>
                </tr>
              ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
