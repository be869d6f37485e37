/**
 * Calendar arithmetic in a tenant's timezone, on the Intl time zone database (no tables of our own).
 * A "business day" is Monday to Friday; public holidays are not known here.
 */

export interface CalendarDate {
  year: number;
  /** 1..12 */
  month: number;
  day: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
    });
    if (formatters.size >= 500) formatters.clear();
    formatters.set(timeZone, f);
  }
  return f;
}

/** `timeZone` when the Intl database knows it, else UTC. */
export function knownTimeZone(timeZone: unknown): string {
  if (typeof timeZone !== 'string' || timeZone === '') return 'UTC';
  try {
    formatter(timeZone);
    return timeZone;
  } catch {
    return 'UTC';
  }
}

function wallClock(instant: number, timeZone: string) {
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(new Date(instant))) {
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  }
  return parts as { year: number; month: number; day: number; hour: number; minute: number; second: number };
}

/** The calendar date of an instant in `timeZone`. */
export function dateIn(instant: Date, timeZone: string): CalendarDate {
  const { year, month, day } = wallClock(instant.getTime(), timeZone);
  return { year, month, day };
}

/** How far `timeZone`'s wall clock is ahead of UTC at `instant`, in milliseconds. */
function offsetAt(instant: number, timeZone: string): number {
  const w = wallClock(instant, timeZone);
  return Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second) - Math.floor(instant / 1000) * 1000;
}

/** The instant at which `timeZone`'s wall clock shows this date and time. */
export function instantOf(date: CalendarDate, time: { hour: number; minute: number; second: number }, timeZone: string): Date {
  const asUtc = Date.UTC(date.year, date.month - 1, date.day, time.hour, time.minute, time.second);
  let instant = asUtc - offsetAt(asUtc, timeZone);
  // Near a change of offset (daylight saving) the first guess used the other side's offset.
  const corrected = asUtc - offsetAt(instant, timeZone);
  if (corrected !== instant) instant = corrected;
  return new Date(instant);
}

/** The date `count` business days (Monday to Friday) after `date`, `date` itself not counted. */
export function addBusinessDays(date: CalendarDate, count: number): CalendarDate {
  const d = new Date(Date.UTC(date.year, date.month - 1, date.day));
  let left = count;
  while (left > 0) {
    d.setUTCDate(d.getUTCDate() + 1);
    const weekday = d.getUTCDay();
    if (weekday !== 0 && weekday !== 6) left -= 1;
  }
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

/** The end (23:59:59) of the `businessDays`-th business day after the day of `created` in `timeZone`. */
export function endOfBusinessDay(created: Date, businessDays: number, timeZone: string): Date {
  const due = addBusinessDays(dateIn(created, timeZone), businessDays);
  return instantOf(due, { hour: 23, minute: 59, second: 59 }, timeZone);
}
