/**
 * Cron schedules as Kubernetes reads them: robfig/cron's `ParseStandard`, which kube-apiserver's
 * CronJob validation calls and the CronJob controller schedules with. Five fields (minute, hour,
 * day of month, month, day of week) of numbers, names (`JAN`, `MON`), ranges, lists, steps, `*`
 * and `?`; the descriptors `@yearly`/`@annually`, `@monthly`, `@weekly`, `@daily`/`@midnight`,
 * `@hourly` and `@every <duration>`; and a `CRON_TZ=` or `TZ=` prefix naming the time zone the
 * fields are read in. Errors carry robfig/cron's text, which reaches users in
 * `spec.schedule: Invalid value: "…": <error>`.
 *
 * @example
 * ```ts
 * cronScheduleError('*\/15 * * * *'); // undefined
 * cronScheduleError('61 * * * *'); // 'end of range (61) above maximum (59): 61'
 * parseSchedule('0 6 * * *').next(Date.parse('2026-03-01T07:00:00Z')); // 2026-03-02T06:00Z in ms
 * ```
 */

/** A parsed schedule: {@link Schedule.next} gives the first matching minute after a time. */
export interface Schedule {
  /** The IANA time zone the fields are read in. */
  readonly timeZone: string;
  /** The first time strictly after `afterMs` (epoch ms) that matches, or undefined within five years. */
  next(afterMs: number): number | undefined;
}

/** A schedule that does not parse; the message is robfig/cron's wording. */
export class ScheduleError extends Error {}

interface Bounds {
  min: number;
  max: number;
  names?: Record<string, number>;
}

const MONTHS: Record<string, number> = {
  jan: 1,
  feb: 2,
  mar: 3,
  apr: 4,
  may: 5,
  jun: 6,
  jul: 7,
  aug: 8,
  sep: 9,
  oct: 10,
  nov: 11,
  dec: 12,
};
const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const DAYS: Record<string, number> = Object.fromEntries(DAY_NAMES.map((d, i) => [d, i]));

/** Minute, hour, day of month, month, day of week: the five fields of a standard spec. */
const FIELDS: Bounds[] = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: MONTHS },
  { min: 0, max: 6, names: DAYS },
];

const DESCRIPTORS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

/** Go's `time.ParseDuration` accepts this (`1h30m`, `90s`, `1.5h`). */
const GO_DURATION = /^[+-]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$|^[+-]?0$/;

/** `mustParseInt`: Go's strconv.Atoi, then no negatives. */
function mustParseInt(expr: string): number {
  if (!/^[+-]?\d+$/.test(expr))
    throw new ScheduleError(
      `failed to parse int from ${expr}: strconv.Atoi: parsing ${JSON.stringify(expr)}: invalid syntax`,
    );
  const n = Number(expr);
  if (n < 0) throw new ScheduleError(`negative number (${n}) not allowed: ${expr}`);
  return n;
}

function parseIntOrName(expr: string, names: Record<string, number> | undefined): number {
  const named = names?.[expr.toLowerCase()];
  return named ?? mustParseInt(expr);
}

interface Field {
  readonly values: ReadonlySet<number>;
  /** robfig's star bit (`*` or `?` without a step above 1): decides how day of month and day of week combine. */
  readonly star: boolean;
}

/** `getRange` over a field's comma-separated parts (`*`, `5`, `1-5`, `0-30/10`, `mon-fri/2`). */
function parseField(field: string, r: Bounds): Field {
  const values = new Set<number>();
  let star = false;
  for (const expr of field.split(',')) {
    const rangeAndStep = expr.split('/');
    const lowAndHigh = rangeAndStep[0]!.split('-');
    let start: number;
    let end: number;
    let isStar = false;
    if (lowAndHigh[0] === '*' || lowAndHigh[0] === '?') {
      start = r.min;
      end = r.max;
      isStar = true;
    } else {
      start = parseIntOrName(lowAndHigh[0]!, r.names);
      if (lowAndHigh.length === 1) end = start;
      else if (lowAndHigh.length === 2) end = parseIntOrName(lowAndHigh[1]!, r.names);
      else throw new ScheduleError(`too many hyphens: ${expr}`);
    }
    let step = 1;
    if (rangeAndStep.length === 2) {
      step = mustParseInt(rangeAndStep[1]!);
      if (lowAndHigh.length === 1) end = r.max;
    } else if (rangeAndStep.length > 2) throw new ScheduleError(`too many slashes: ${expr}`);
    if (start < r.min)
      throw new ScheduleError(`beginning of range (${start}) below minimum (${r.min}): ${expr}`);
    if (end > r.max) throw new ScheduleError(`end of range (${end}) above maximum (${r.max}): ${expr}`);
    if (start > end)
      throw new ScheduleError(`beginning of range (${start}) beyond end of range (${end}): ${expr}`);
    if (step === 0) throw new ScheduleError(`step of range should be a positive number: ${expr}`);
    if (isStar && step <= 1) star = true;
    for (let v = start; v <= end; v += step) values.add(v);
  }
  return { values, star };
}

/** A valid IANA zone name, as Go's `time.LoadLocation` accepts it (`Local` included). */
export function knownTimeZone(name: string): boolean {
  if (name === 'UTC' || name === 'Local') return true;
  return isTimeZone(name);
}

/** Whether `zone` is an IANA time zone this runtime can compute wall-clock times in. */
export function isTimeZone(zone: string): boolean {
  try {
    formatter(zone);
    return true;
  } catch {
    return false;
  }
}

interface Parsed {
  timeZone: string | undefined;
  /** The five fields, or undefined for `@every <duration>`. */
  fields: Field[] | undefined;
}

/** robfig/cron's `ParseStandard`; throws {@link ScheduleError}. */
function parse(spec: string): Parsed {
  if (spec.length === 0) throw new ScheduleError('empty spec string');
  let rest = spec;
  let timeZone: string | undefined;
  if (rest.startsWith('TZ=') || rest.startsWith('CRON_TZ=')) {
    const i = rest.indexOf(' ');
    const eq = rest.indexOf('=');
    timeZone = rest.slice(eq + 1, i < 0 ? undefined : i);
    if (!knownTimeZone(timeZone))
      throw new ScheduleError(`provided bad location ${timeZone}: unknown time zone ${timeZone}`);
    rest = i < 0 ? '' : rest.slice(i).trim();
  }
  if (rest.startsWith('@')) {
    if (rest.startsWith('@every ')) {
      const d = rest.slice('@every '.length);
      if (!GO_DURATION.test(d))
        throw new ScheduleError(
          `failed to parse duration ${rest}: time: invalid duration ${JSON.stringify(d)}`,
        );
      return { timeZone, fields: undefined };
    }
    const standard = DESCRIPTORS[rest];
    if (standard === undefined) throw new ScheduleError(`unrecognized descriptor: ${rest}`);
    rest = standard;
  }
  const fields = rest.split(/\s+/).filter((f) => f !== '');
  if (fields.length !== 5)
    throw new ScheduleError(`expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`);
  return { timeZone, fields: fields.map((f, i) => parseField(f, FIELDS[i]!)) };
}

/**
 * `cron.ParseStandard(spec)` as validation uses it: undefined when the schedule parses, else
 * robfig/cron's error text.
 */
export function cronScheduleError(spec: string): string | undefined {
  try {
    parse(spec);
    return undefined;
  } catch (err) {
    if (err instanceof ScheduleError) return err.message;
    throw err;
  }
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
    weekday: DAY_NAMES.indexOf((parts.weekday ?? '').toLowerCase()),
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
 * Parses a schedule for computing its times; `defaultZone` applies without a `CRON_TZ=`/`TZ=`
 * prefix. Surrounding whitespace is ignored. Only schedules of minute fields (and the
 * descriptors that stand for them) have times here: `@every` and a zone this runtime cannot
 * compute in (`Local`) are refused.
 *
 * @throws ScheduleError when the schedule or its zone does not parse.
 */
export function parseSchedule(spec: string, defaultZone = 'UTC'): Schedule {
  const text = spec.trim();
  const parsed = parse(text);
  const timeZone = parsed.timeZone ?? defaultZone;
  if (parsed.timeZone !== undefined && !isTimeZone(timeZone))
    throw new ScheduleError(`provided bad location ${timeZone}: unknown time zone ${timeZone}`);
  if (!parsed.fields)
    throw new ScheduleError(`unrecognized descriptor: ${text.replace(/^(CRON_)?TZ=\S+\s+/, '')}`);
  const [minute, hour, dayOfMonth, month, dayOfWeek] = parsed.fields as [Field, Field, Field, Field, Field];
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
