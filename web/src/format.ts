const UNITS: Array<[number, string]> = [
  [60, "s"],
  [60, "min"],
  [24, "h"],
  [30, "d"],
  [12, "mo"],
];

/** "just now", "5 min ago", "3 h ago", "2 d ago". */
export function relativeTime(ms: number, now = Date.now()): string {
  let value = Math.max(0, Math.round((now - ms) / 1000));
  if (value < 10) return "just now";
  for (const [size, unit] of UNITS) {
    if (value < size) return `${value} ${unit} ago`;
    value = Math.floor(value / size);
  }
  return `${value} y ago`;
}

/** An entry's time: the time of day for today's, with the date before it for any other day's. */
export function entryTime(ms: number, now = Date.now()): string {
  const at = new Date(ms);
  const time = at.toLocaleTimeString();
  return at.toDateString() === new Date(now).toDateString()
    ? time
    : `${at.toLocaleDateString(undefined, { year: "numeric", month: "short", day: "numeric" })} ${time}`;
}

export function absoluteTime(ms: number): string {
  return new Date(ms).toLocaleString();
}

const compact = new Intl.NumberFormat(undefined, { notation: "compact", maximumFractionDigits: 1 });
const whole = new Intl.NumberFormat();

export function count(n: number): string {
  return n >= 10_000 ? compact.format(n) : whole.format(n);
}

export function usd(n: number): string {
  return n < 0.01 && n > 0 ? `$${n.toFixed(4)}` : `$${n.toFixed(2)}`;
}

export function hourLabel(ms: number, withDay = false): string {
  const options: Intl.DateTimeFormatOptions = { hour: "2-digit", minute: "2-digit" };
  return new Date(ms).toLocaleString(undefined, withDay ? { ...options, weekday: "short" } : options);
}
