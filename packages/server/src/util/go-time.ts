/**
 * Go's `time.Parse` for the two layouts Kubernetes decodes timestamps with: `metav1.Time`
 * (RFC 3339, `2006-01-02T15:04:05Z07:00`, where a fraction of a second is taken although the
 * layout has none) and `metav1.MicroTime` (`2006-01-02T15:04:05.000000Z07:00`, exactly six
 * digits). Only the verdict and Go's error text: `parsing time "x" as "layout": cannot parse
 * "rest" as "element"`, or `…: month out of range`, `…: extra text: "rest"`.
 */

export const RFC3339 = '2006-01-02T15:04:05Z07:00';
export const RFC3339_MICRO = '2006-01-02T15:04:05.000000Z07:00';

type Layout = typeof RFC3339 | typeof RFC3339_MICRO;

/** A layout's chunks: the literal before an element, and the element. */
const CHUNKS: Record<Layout, readonly [prefix: string, element: string][]> = {
  [RFC3339]: [
    ['', '2006'],
    ['-', '01'],
    ['-', '02'],
    ['T', '15'],
    [':', '04'],
    [':', '05'],
    ['', 'Z07:00'],
  ],
  [RFC3339_MICRO]: [
    ['', '2006'],
    ['-', '01'],
    ['-', '02'],
    ['T', '15'],
    [':', '04'],
    [':', '05'],
    ['', '.000000'],
    ['', 'Z07:00'],
  ],
};

const isDigit = (s: string, i: number): boolean =>
  i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57;

/** Go's `getnum`: one or two digits (two when `fixed`). */
function getnum(s: string, fixed: boolean): [number, string] | undefined {
  if (!isDigit(s, 0)) return undefined;
  if (!isDigit(s, 1)) return fixed ? undefined : [s.charCodeAt(0) - 48, s.slice(1)];
  return [(s.charCodeAt(0) - 48) * 10 + (s.charCodeAt(1) - 48), s.slice(2)];
}

/** Go's `atoi`: an optional sign, then digits only. */
function atoi(s: string): number | undefined {
  const m = /^([-+]?)(\d+)$/.exec(s);
  if (!m) return undefined;
  const n = Number(m[2]);
  return m[1] === '-' ? -n : n;
}

/** Go's time-package `quote`: other than printable ASCII as `\xNN` per byte. */
export function goTimeQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (c >= 0x80 || c < 0x20) {
      for (const b of Buffer.from(ch, 'utf8')) out += `\\x${b.toString(16).padStart(2, '0')}`;
    } else {
      if (ch === '"' || ch === '\\') out += '\\';
      out += ch;
    }
  }
  return `${out}"`;
}

function daysIn(month: number, year: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/**
 * Parses `value` as Go's `time.Parse(layout, value)` does; undefined when it parses, else Go's
 * error text.
 *
 * @example
 * ```ts
 * goParseTimeError(RFC3339_MICRO, '2026-01-01T00:00:00Z');
 * // 'parsing time "2026-01-01T00:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"'
 * ```
 */
export function goParseTimeError(layout: Layout, input: string): string | undefined {
  const bad = (element: string, rest: string) =>
    `parsing time ${goTimeQuote(input)} as ${goTimeQuote(layout)}: cannot parse ${goTimeQuote(rest)} as ${goTimeQuote(element)}`;
  const outOfRange = (what: string) => `parsing time ${goTimeQuote(input)}: ${what} out of range`;
  let value = input;
  let year = 0;
  let month = 0;
  let day = 0;
  const chunks = CHUNKS[layout];
  for (let i = 0; i < chunks.length; i++) {
    const [prefix, element] = chunks[i]!;
    if (!value.startsWith(prefix)) return bad(prefix, value);
    value = value.slice(prefix.length);
    const hold = value;
    let range = '';
    let ok = true;
    switch (element) {
      case '2006': {
        if (value.length < 4 || !isDigit(value, 0)) ok = false;
        else {
          const y = atoi(value.slice(0, 4));
          value = value.slice(4);
          if (y === undefined) ok = false;
          else year = y;
        }
        break;
      }
      case '01':
      case '02':
      case '15':
      case '04':
      case '05': {
        const r = getnum(value, element !== '15');
        if (!r) {
          ok = false;
          break;
        }
        const [n, rest] = r;
        value = rest;
        if (element === '01') {
          month = n;
          if (n <= 0 || n > 12) range = 'month';
        } else if (element === '02') day = n;
        else if (element === '15' && n >= 24) range = 'hour';
        else if (element === '04' && n >= 60) range = 'minute';
        else if (element === '05') {
          if (n >= 60) {
            range = 'second';
            break;
          }
          // A fraction in the value although the layout has none (RFC 3339) is taken.
          if (value.length >= 2 && (value[0] === '.' || value[0] === ',') && isDigit(value, 1)) {
            if (chunks[i + 1]?.[1] === '.000000') break;
            let n2 = 2;
            while (isDigit(value, n2)) n2++;
            value = value.slice(n2);
          }
        }
        break;
      }
      case '.000000': {
        if (value.length < 7 || (value[0] !== '.' && value[0] !== ',')) {
          ok = false;
          break;
        }
        const ns = atoi(value.slice(1, 7));
        if (ns === undefined) ok = false;
        else if (ns < 0) range = 'fractional second';
        value = value.slice(7);
        break;
      }
      case 'Z07:00': {
        if (value.startsWith('Z')) {
          value = value.slice(1);
          break;
        }
        if (value.length < 6 || value[3] !== ':') {
          ok = false;
          break;
        }
        const [sign, hh, mm] = [value[0]!, value.slice(1, 3), value.slice(4, 6)];
        value = value.slice(6);
        const h = getnum(hh, true);
        const m = h && getnum(mm, true);
        if (!h || !m) {
          ok = false;
          break;
        }
        if (h[0] > 24) range = 'time zone offset hour';
        if (m[0] > 60) range = 'time zone offset minute';
        if (sign !== '+' && sign !== '-') ok = false;
        break;
      }
    }
    if (range) return outOfRange(range);
    if (!ok) return bad(element, hold);
  }
  if (value.length > 0) return `parsing time ${goTimeQuote(input)}: extra text: ${goTimeQuote(value)}`;
  if (day < 1 || day > daysIn(month, year)) return outOfRange('day');
  return undefined;
}
