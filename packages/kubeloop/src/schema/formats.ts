/**
 * The string formats a CRD schema can use (`format:`), checked as kube-openapi's strfmt
 * registry does. apiextensions strips every other format before validation, so unknown
 * formats are ignored. Validators follow Go's parsers closely; see each for caveats.
 */
import { isIPv4, isIPv6 } from 'node:net';

const dateRe = /^(\d{4})-(\d{2})-(\d{2})$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** `2006-01-02` with a real calendar day (Go's `time.Parse`). */
export function isDate(s: string): boolean {
  const m = dateRe.exec(s);
  if (!m) return false;
  const y = Number(m[1]);
  const mo = Number(m[2]);
  const d = Number(m[3]);
  if (mo < 1 || mo > 12 || d < 1) return false;
  const leap = y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
  return d <= (mo === 2 && leap ? 29 : (DAYS_IN_MONTH[mo - 1] ?? 0));
}

const timeRe = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/;

/** strfmt `IsDateTime`: RFC 3339 date-time (case-insensitive `T`/`Z`). */
export function isDateTime(s: string): boolean {
  if (s.length < 4) return false;
  // strfmt splits the lowercased text at `t`: the date, then the time up to any further `t`.
  const lower = s.toLowerCase();
  const i = lower.indexOf('t');
  if (i < 0 || !isDate(lower.slice(0, i))) return false;
  const j = lower.indexOf('t', i + 1);
  const m = timeRe.exec(j < 0 ? lower.slice(i + 1) : lower.slice(i + 1, j));
  if (!m) return false;
  return Number(m[1]) <= 23 && Number(m[2]) <= 59 && Number(m[3]) <= 59;
}

const goDurationRe = /^[-+]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/;
const durationUnits = new Set([
  'ns',
  'us',
  'µs',
  'ms',
  's',
  'm',
  'h',
  'd',
  'w',
  'nanosecond',
  'nanoseconds',
  'microsecond',
  'microseconds',
  'millisecond',
  'milliseconds',
  'sec',
  'secs',
  'second',
  'seconds',
  'min',
  'mins',
  'minute',
  'minutes',
  'hr',
  'hrs',
  'hour',
  'hours',
  'day',
  'days',
  'wk',
  'wks',
  'week',
  'weeks',
]);

/** strfmt `IsDuration`: Go's `time.ParseDuration` or the `<n> <unit>` form (`3 days`). */
export function isDuration(s: string): boolean {
  if (s === '0' || goDurationRe.test(s)) return true;
  const m = /^(\d+)\s*([A-Za-zµ]+)$/.exec(s);
  return m !== null && durationUnits.has((m[2] ?? '').toLowerCase());
}

const base64Re = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$/;
const hostnameRe =
  /^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z0-9\p{S}\p{L}])(-?[a-zA-Z0-9\p{S}\p{L}]){1,62})$/u;

function isHostname(s: string): boolean {
  if (!hostnameRe.test(s) || Buffer.byteLength(s) > 255) return false;
  return s.split('.').every((p) => Buffer.byteLength(p) <= 63);
}

function isCIDR(s: string): boolean {
  const i = s.indexOf('/');
  if (i < 0) return false;
  const ip = s.slice(0, i);
  const bits = s.slice(i + 1);
  if (!/^\d{1,3}$/.test(bits)) return false;
  const n = Number(bits);
  if (isIPv4(ip)) return n <= 32 && !/(^|\.)0\d/.test(ip);
  return isIPv6(ip) && n <= 128;
}

function isMAC(s: string): boolean {
  return (
    /^[0-9A-Fa-f]{2}(?:([:-])[0-9A-Fa-f]{2})(?:\1[0-9A-Fa-f]{2}){4}(?:(?:\1[0-9A-Fa-f]{2}){2}(?:(?:\1[0-9A-Fa-f]{2}){12})?)?$/.test(
      s,
    ) ||
    /^[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}(?:\.[0-9A-Fa-f]{4}(?:(?:\.[0-9A-Fa-f]{4}){5})?)?$/.test(
      s,
    )
  );
}

function isRequestURI(s: string): boolean {
  if (s.startsWith('/')) return !/\s/.test(s);
  if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(s)) return false;
  try {
    new URL(s);
    return true;
  } catch {
    return false;
  }
}

function isEmail(s: string): boolean {
  const m = /^(?:[^<>]*<([^<>]+)>|([^<>\s]+))$/.exec(s.trim());
  const addr = m?.[1] ?? m?.[2];
  return addr !== undefined && /^[^@\s]+@[^@\s]+$/.test(addr) && !addr.endsWith('.');
}

function luhn(digits: string): boolean {
  let sum = 0;
  let alt = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = Number(digits[i]);
    if (alt) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    alt = !alt;
  }
  return sum % 10 === 0;
}

function isCreditCard(s: string): boolean {
  const digits = s.replace(/[^0-9]/g, '');
  return (
    /^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|(222[1-9]|22[3-9][0-9]|2[3-6][0-9]{2}|27[01][0-9]|2720)[0-9]{12}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11}|6[27][0-9]{14})$/.test(
      digits,
    ) && luhn(digits)
  );
}

function isISBN10(s: string): boolean {
  const c = s.replace(/[\s-]/g, '');
  if (!/^\d{9}[\dX]$/.test(c)) return false;
  let sum = 0;
  for (let i = 0; i < 9; i++) sum += (i + 1) * Number(c[i]);
  sum += c[9] === 'X' ? 100 : 10 * Number(c[9]);
  return sum % 11 === 0;
}

function isISBN13(s: string): boolean {
  const c = s.replace(/[\s-]/g, '');
  if (!/^\d{13}$/.test(c)) return false;
  let sum = 0;
  for (let i = 0; i < 12; i++) sum += Number(c[i]) * (i % 2 === 0 ? 1 : 3);
  return (10 - (sum % 10)) % 10 === Number(c[12]);
}

const quantityRe = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+|Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?$/;

/** A Kubernetes resource quantity (`resource.ParseQuantity`): `10Gi`, `500m`, `1e3`. */
export const isQuantity = (s: string): boolean => quantityRe.test(s);

const uuidRe = /^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const uuid3Re = /^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$/i;
const uuid4Re = /^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;
const uuid5Re = /^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$/i;

const checkers: Record<string, (s: string) => boolean> = {
  bsonobjectid: (s) => /^[0-9a-fA-F]{24}$/.test(s),
  uri: isRequestURI,
  email: isEmail,
  hostname: isHostname,
  ipv4: (s) => isIPv4(s) && !/(^|\.)0\d/.test(s),
  ipv6: (s) => isIPv6(s) && s.includes(':'),
  cidr: isCIDR,
  mac: isMAC,
  uuid: (s) => uuidRe.test(s),
  uuid3: (s) => uuid3Re.test(s),
  uuid4: (s) => uuid4Re.test(s),
  uuid5: (s) => uuid5Re.test(s),
  isbn: (s) => isISBN10(s) || isISBN13(s),
  isbn10: isISBN10,
  isbn13: isISBN13,
  creditcard: isCreditCard,
  ssn: (s) => /^\d{3}[- ]?\d{2}[- ]?\d{4}$/.test(s),
  hexcolor: (s) => /^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/.test(s),
  rgbcolor: (s) =>
    /^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$/.test(
      s,
    ),
  byte: (s) => base64Re.test(s),
  password: () => true,
  date: isDate,
  duration: isDuration,
  datetime: isDateTime,
  quantity: isQuantity,
};

/** The registry key of a format name (strfmt lower-cases and drops dashes: `date-time` → `datetime`). */
export const normalizeFormat = (format: string): string => format.toLowerCase().replaceAll('-', '');

/**
 * The checker of a string format, or `undefined` when apiextensions ignores the format (any
 * format not in its supported set, and any format on non-string types).
 */
export function stringFormatChecker(format: string | undefined): ((s: string) => boolean) | undefined {
  if (!format) return undefined;
  return checkers[normalizeFormat(format)];
}

/** The formats apiextensions keeps on string schemas (normalized names). */
export const SUPPORTED_STRING_FORMATS: readonly string[] = Object.keys(checkers);
