/**
 * The schedule check of batch/v1 CronJobs: `cron.ParseStandard` of github.com/robfig/cron/v3,
 * which kube-apiserver's validation calls, with its error messages (they reach the user in
 * `spec.schedule: Invalid value: "…": <error>`).
 */

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
const DAYS: Record<string, number> = { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 };

/** Minute, hour, day of month, month, day of week: the five fields of a standard spec. */
const FIELDS: Bounds[] = [
  { min: 0, max: 59 },
  { min: 0, max: 23 },
  { min: 1, max: 31 },
  { min: 1, max: 12, names: MONTHS },
  { min: 0, max: 6, names: DAYS },
];

const DESCRIPTORS = new Set([
  '@yearly',
  '@annually',
  '@monthly',
  '@weekly',
  '@daily',
  '@midnight',
  '@hourly',
]);

class CronError extends Error {}

/** `mustParseInt`: Go's strconv.Atoi, then no negatives. */
function mustParseInt(expr: string): number {
  if (!/^[+-]?\d+$/.test(expr))
    throw new CronError(
      `failed to parse int from ${expr}: strconv.Atoi: parsing ${JSON.stringify(expr)}: invalid syntax`,
    );
  const n = Number(expr);
  if (n < 0) throw new CronError(`negative number (${n}) not allowed: ${expr}`);
  return n;
}

function parseIntOrName(expr: string, names: Record<string, number> | undefined): number {
  const named = names?.[expr.toLowerCase()];
  return named ?? mustParseInt(expr);
}

/** `getRange`: one comma-separated part of a field (`*`, `5`, `1-5`, `0-30/10`, `mon-fri/2`). */
function checkRange(expr: string, r: Bounds): void {
  const rangeAndStep = expr.split('/');
  const lowAndHigh = rangeAndStep[0]!.split('-');
  let start: number;
  let end: number;
  if (lowAndHigh[0] === '*' || lowAndHigh[0] === '?') {
    start = r.min;
    end = r.max;
  } else {
    start = parseIntOrName(lowAndHigh[0]!, r.names);
    if (lowAndHigh.length === 1) end = start;
    else if (lowAndHigh.length === 2) end = parseIntOrName(lowAndHigh[1]!, r.names);
    else throw new CronError(`too many hyphens: ${expr}`);
  }
  let step = 1;
  if (rangeAndStep.length === 2) {
    step = mustParseInt(rangeAndStep[1]!);
    if (lowAndHigh.length === 1) end = r.max;
  } else if (rangeAndStep.length > 2) throw new CronError(`too many slashes: ${expr}`);
  if (start < r.min) throw new CronError(`beginning of range (${start}) below minimum (${r.min}): ${expr}`);
  if (end > r.max) throw new CronError(`end of range (${end}) above maximum (${r.max}): ${expr}`);
  if (start > end) throw new CronError(`beginning of range (${start}) beyond end of range (${end}): ${expr}`);
  if (step === 0) throw new CronError(`step of range should be a positive number: ${expr}`);
}

/** A valid IANA zone name, as Go's time.LoadLocation accepts it. */
export function knownTimeZone(name: string): boolean {
  if (name === 'UTC' || name === 'Local') return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** Go's `time.ParseDuration` accepts this (`1h30m`, `90s`, `1.5h`). */
const GO_DURATION = /^[+-]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$|^[+-]?0$/;

/**
 * `cron.ParseStandard(spec)`: undefined when the schedule parses, else robfig/cron's error text.
 */
export function cronScheduleError(spec: string): string | undefined {
  try {
    if (spec.length === 0) throw new CronError('empty spec string');
    let rest = spec;
    if (rest.startsWith('TZ=') || rest.startsWith('CRON_TZ=')) {
      const i = rest.indexOf(' ');
      const eq = rest.indexOf('=');
      const zone = rest.slice(eq + 1, i < 0 ? undefined : i);
      if (!knownTimeZone(zone))
        throw new CronError(`provided bad location ${zone}: unknown time zone ${zone}`);
      rest = i < 0 ? '' : rest.slice(i).trim();
    }
    if (rest.startsWith('@')) {
      if (rest.startsWith('@every ')) {
        const d = rest.slice('@every '.length);
        if (!GO_DURATION.test(d))
          throw new CronError(
            `failed to parse duration ${rest}: time: invalid duration ${JSON.stringify(d)}`,
          );
        return undefined;
      }
      if (!DESCRIPTORS.has(rest)) throw new CronError(`unrecognized descriptor: ${rest}`);
      return undefined;
    }
    const fields = rest.split(/\s+/).filter((f) => f !== '');
    if (fields.length !== 5)
      throw new CronError(`expected exactly 5 fields, found ${fields.length}: [${fields.join(' ')}]`);
    fields.forEach((field, i) => {
      for (const part of field.split(',')) checkRange(part, FIELDS[i]!);
    });
    return undefined;
  } catch (err) {
    if (err instanceof CronError) return err.message;
    throw err;
  }
}
