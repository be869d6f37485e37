/**
 * Calendar days in a time zone, on the Intl time zone database: what SQLite's `hp_local_day` computes (PostgreSQL
 * has `AT TIME ZONE`). An instant's offset is looked up once per half hour of UTC (every offset change of the
 * database falls on one) and kept, so that grouping many records by their local day stays cheap.
 */

const formatters = new Map<string, Intl.DateTimeFormat>();
const offsets = new Map<string, number>();

/** An IANA time zone name as the dialects accept it (written into SQL as a literal, so no quotes ever). */
export const TIME_ZONE_PATTERN = /^[A-Za-z_]+(\/[A-Za-z0-9_+-]+)*$/;

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', { timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric' });
    if (formatters.size >= 500) formatters.clear();
    formatters.set(timeZone, f);
  }
  return f;
}

/** `timeZone` when it is a name the Intl database knows, else UTC. */
export function knownTimeZone(timeZone: unknown): string {
  if (typeof timeZone !== 'string' || !TIME_ZONE_PATTERN.test(timeZone)) return 'UTC';
  try {
    formatter(timeZone);
    return timeZone;
  } catch {
    return 'UTC';
  }
}

/** How many milliseconds `timeZone`'s wall clock is ahead of UTC at `instant` (a whole minute). */
function offsetAt(instant: number, timeZone: string): number {
  const p: Record<string, number> = {};
  for (const part of formatter(timeZone).formatToParts(new Date(instant))) if (part.type !== 'literal') p[part.type] = Number(part.value);
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute) - Math.floor(instant / 60000) * 60000;
}

/** The calendar day (YYYY-MM-DD) of the ISO instant `iso` in `timeZone`; null for what is not an instant. */
export function localDay(iso: unknown, timeZone: string): string | null {
  if (typeof iso !== 'string') return null;
  const instant = Date.parse(iso);
  if (Number.isNaN(instant)) return null;
  const halfHour = Math.floor(instant / 1800000);
  const key = `${timeZone}\u0000${halfHour}`;
  let offset = offsets.get(key);
  if (offset === undefined) {
    offset = offsetAt(halfHour * 1800000, timeZone);
    if (offsets.size >= 100000) offsets.clear();
    offsets.set(key, offset);
  }
  return new Date(instant + offset).toISOString().slice(0, 10);
}
