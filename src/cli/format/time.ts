const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

/** `just now`, `42s ago`, `3m ago`, `5h ago`, `12d ago`; older than 60 days, the local date. */
export function formatRelative(ts: number, now: number): string {
  const diff = now - ts;
  // A timestamp slightly ahead of this clock (another host's clock) still reads as now.
  if (diff < SECOND) return "just now";
  if (diff < MINUTE) return `${Math.floor(diff / SECOND)}s ago`;
  if (diff < HOUR) return `${Math.floor(diff / MINUTE)}m ago`;
  if (diff < DAY) return `${Math.floor(diff / HOUR)}h ago`;
  if (diff < 60 * DAY) return `${Math.floor(diff / DAY)}d ago`;
  return formatDate(ts);
}

/** `due` once `ts` has come, else `in 42s`, `in 3m`, `in 5h`, `in 12d`; further than 60 days, the local date. */
export function formatUntil(ts: number, now: number): string {
  const diff = ts - now;
  if (diff <= 0) return "due";
  if (diff < MINUTE) return `in ${Math.ceil(diff / SECOND)}s`;
  if (diff < HOUR) return `in ${Math.floor(diff / MINUTE)}m`;
  if (diff < DAY) return `in ${Math.floor(diff / HOUR)}h`;
  if (diff < 60 * DAY) return `in ${Math.floor(diff / DAY)}d`;
  return formatDate(ts);
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, "0");
}

/** `2026-03-14` in local time. */
export function formatDate(ts: number): string {
  const d = new Date(ts);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** `2026-03-14 09:26:53` in local time. */
export function formatDateTime(ts: number): string {
  const d = new Date(ts);
  return `${formatDate(ts)} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** `2026-03-14 09:26:53 (3m ago)`. */
export function formatWhen(ts: number, now: number): string {
  return `${formatDateTime(ts)} (${formatRelative(ts, now)})`;
}
