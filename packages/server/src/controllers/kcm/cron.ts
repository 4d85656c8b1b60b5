/**
 * Cron schedules as the CronJob controller reads them (robfig/cron's `ParseStandard`): five fields
 * (minute, hour, day of month, month, day of week) of numbers, names (`JAN`, `MON`), ranges,
 * lists, steps, `*` and `?`; the macros `@yearly`/`@annually`, `@monthly`, `@weekly`,
 * `@daily`/`@midnight`, `@hourly`; and a `CRON_TZ=` or `TZ=` prefix naming the time zone the
 * fields are read in (UTC otherwise, kube-controller-manager's zone in kind and minikube).
 */

/** A parsed schedule: {@link Schedule.next} gives the first matching minute after a time. */
export interface Schedule {
  /** The IANA time zone the fields are read in. */
  readonly timeZone: string;
  /** The first time strictly after `afterMs` (epoch ms) that matches, or undefined within five years. */
  next(afterMs: number): number | undefined;
}

/** A schedule that does not parse; the message is robfig/cron's wording where it has one. */
export class ScheduleError extends Error {}

const MACROS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

interface Field {
  readonly values: ReadonlySet<number>;
  /** `*` or `?`: robfig's star bit, which decides how day of month and day of week combine. */
  readonly star: boolean;
}

function parseField(text: string, min: number, max: number, names?: string[]): Field {
  const values = new Set<number>();
  let star = false;
  const value = (s: string): number => {
    const i = names?.indexOf(s.toLowerCase()) ?? -1;
    if (i >= 0) return i + (names === MONTHS ? 1 : 0);
    if (!/^\d+$/.test(s))
      throw new ScheduleError(`failed to parse int from ${s}: strconv.Atoi: parsing "${s}": invalid syntax`);
    return Number(s);
  };
  for (const part of text.split(',')) {
    const [range = '', stepText] = part.split('/');
    let lo: number;
    let hi: number;
    if (range === '*' || range === '?') {
      lo = min;
      hi = max;
      if (stepText === undefined) star = true;
    } else {
      const [a = '', b] = range.split('-');
      lo = value(a);
      hi = b === undefined ? (stepText === undefined ? lo : max) : value(b);
    }
    const step = stepText === undefined ? 1 : Number(stepText);
    if (!Number.isInteger(step) || step <= 0)
      throw new ScheduleError(`step of range should be a positive number: ${part}`);
    if (lo < min) throw new ScheduleError(`beginning of range (${lo}) below minimum (${min}): ${part}`);
    if (hi > max) throw new ScheduleError(`end of range (${hi}) above maximum (${max}): ${part}`);
    if (lo > hi) throw new ScheduleError(`beginning of range (${lo}) beyond end of range (${hi}): ${part}`);
    for (let v = lo; v <= hi; v += step) values.add(v);
  }
  return { values, star };
}

/** Wall-clock fields of an instant in a zone. */
interface Local {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  weekday: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** Whether `zone` is an IANA time zone this runtime knows (Go's `time.LoadLocation`). */
export function isTimeZone(zone: string): boolean {
  try {
    formatter(zone);
    return true;
  } catch {
    return false;
  }
}

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      weekday: 'short',
    });
    formatters.set(zone, f);
  }
  return f;
}

function local(ms: number, zone: string): Local {
  if (zone === 'UTC') {
    const d = new Date(ms);
    return {
      year: d.getUTCFullYear(),
      month: d.getUTCMonth() + 1,
      day: d.getUTCDate(),
      hour: d.getUTCHours(),
      minute: d.getUTCMinutes(),
      weekday: d.getUTCDay(),
    };
  }
  const parts: Record<string, string> = {};
  for (const p of formatter(zone).formatToParts(ms)) parts[p.type] = p.value;
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    weekday: DAYS.indexOf((parts.weekday ?? '').toLowerCase()),
  };
}

/** The zone's offset from UTC at `ms`, in minutes (east positive). */
export function offsetMinutes(ms: number, zone: string): number {
  const l = local(ms, zone);
  const asUtc = Date.UTC(l.year, l.month - 1, l.day, l.hour, l.minute);
  return Math.round((asUtc - Math.floor(ms / 60_000) * 60_000) / 60_000);
}

/** RFC 3339 in `zone` at second precision, as Go formats `t.In(zone).Format(time.RFC3339)`. */
export function rfc3339In(ms: number, zone: string): string {
  const off = offsetMinutes(ms, zone);
  const shifted = new Date(ms + off * 60_000).toISOString().replace(/\.\d{3}Z$/, '');
  if (off === 0) return `${shifted}Z`;
  const abs = Math.abs(off);
  const hh = String(Math.floor(abs / 60)).padStart(2, '0');
  const mm = String(abs % 60).padStart(2, '0');
  return `${shifted}${off < 0 ? '-' : '+'}${hh}:${mm}`;
}

const MINUTE = 60_000;

/**
 * Parses a schedule; `defaultZone` applies without a `CRON_TZ=`/`TZ=` prefix.
 *
 * @throws ScheduleError when the schedule or its zone does not parse.
 */
export function parseSchedule(spec: string, defaultZone = 'UTC'): Schedule {
  let text = spec.trim();
  let timeZone = defaultZone;
  const tz = /^(?:CRON_TZ|TZ)=(\S+)\s+(.*)$/.exec(text);
  if (tz) {
    timeZone = tz[1] ?? '';
    text = tz[2] ?? '';
    if (!isTimeZone(timeZone))
      throw new ScheduleError(`provided bad location ${timeZone}: unknown time zone ${timeZone}`);
  }
  if (text.startsWith('@')) {
    const macro = MACROS[text.toLowerCase()];
    if (!macro) throw new ScheduleError(`unrecognized descriptor: ${text}`);
    text = macro;
  }
  const fields = text.split(/\s+/).filter(Boolean);
  if (fields.length !== 5)
    throw new ScheduleError(`expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`);
  const [m = '', h = '', dom = '', mon = '', dow = ''] = fields;
  const minute = parseField(m, 0, 59);
  const hour = parseField(h, 0, 23);
  const dayOfMonth = parseField(dom, 1, 31);
  const month = parseField(mon, 1, 12, MONTHS);
  const dayOfWeek = parseField(dow, 0, 6, DAYS);
  const dayMatches = (l: Local): boolean => {
    const d = dayOfMonth.values.has(l.day);
    const w = dayOfWeek.values.has(l.weekday);
    // robfig/cron: when either field is a star, both must match; otherwise either may.
    return dayOfMonth.star || dayOfWeek.star ? d && w : d || w;
  };
  return {
    timeZone,
    next(afterMs: number): number | undefined {
      let t = Math.floor(afterMs / MINUTE) * MINUTE + MINUTE;
      const limit = afterMs + 5 * 366 * 24 * 60 * MINUTE;
      while (t <= limit) {
        const l = local(t, timeZone);
        if (!month.values.has(l.month) || !dayMatches(l)) {
          // On to the next local midnight (a DST day is re-checked there, as the fields say).
          t += ((23 - l.hour) * 60 + (60 - l.minute)) * MINUTE;
          continue;
        }
        if (!hour.values.has(l.hour)) {
          t += (60 - l.minute) * MINUTE;
          continue;
        }
        if (!minute.values.has(l.minute)) {
          t += MINUTE;
          continue;
        }
        return t;
      }
      return undefined;
    },
  };
}
