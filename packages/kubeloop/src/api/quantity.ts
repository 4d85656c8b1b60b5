/**
 * `resource.Quantity` of k8s.io/apimachinery: the one grammar of quantities (`500m`, `1Gi`,
 * `129e6`) for the server's validation and printers, its controllers and operators alike.
 *
 * - {@link parseQuantity}, {@link compareQuantity}, {@link addQuantity}: exact arithmetic.
 * - {@link milli}, {@link formatMilli}: milli-units as numbers, for sums and ratios of CPU and memory.
 * - {@link canonicalQuantity}: the text a quantity has after a Go struct round trip.
 *
 * What decoding a `resource.Quantity` does to its text: apimachinery's `ParseQuantity` keeps
 * the string as sent when it is already canonical (`500m`, `1Gi`, `129e6`) and otherwise
 * re-renders it canonically (`0.5` → `500m`, `1024Mi` → `1Gi`, `1000` → `1k`). The server
 * stores what a Go struct round trip would produce, so built-in objects read back exactly as
 * from kube-apiserver (and `kubectl apply` of `cpu: 0.5` reports `configured`, as it does there).
 */

type Format = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

const DECIMAL_SUFFIX: Record<string, number> = {
  n: -9,
  u: -6,
  m: -3,
  '': 0,
  k: 3,
  M: 6,
  G: 9,
  T: 12,
  P: 15,
  E: 18,
};
const DECIMAL_BY_EXPONENT = new Map(Object.entries(DECIMAL_SUFFIX).map(([s, e]) => [e, s]));
const BINARY_SUFFIX: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const BINARY_BY_POWER = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
const MAX_INT64 = 2n ** 63n - 1n;
/** `maxInt64Factors`: decimal digits an int64 always holds. */
const MAX_INT64_FACTORS = 18;
const NANO = -9;

/**
 * The text a quantity has after kube-apiserver decoded it; undefined when it does not parse
 * (the type check reports those).
 *
 * @example
 * ```ts
 * canonicalQuantity('0.5'); // '500m'
 * canonicalQuantity('1024Mi'); // '1Gi'
 * canonicalQuantity('500m'); // '500m'
 * ```
 */
export function canonicalQuantity(input: string | number): string | undefined {
  const str = typeof input === 'number' ? String(input) : input.trim();
  if (str === '0') return str;
  const m = /^([+-]?)(\d*)(?:\.(\d*))?([eEinumkKMGTP]*[+-]?\d*)$/.exec(str);
  if (!m) return undefined;
  const [, sign = '', digits = '', denom = '', suffix = ''] = m;
  if (digits === '' && denom === '') return undefined;
  const num = digits.replace(/^0+/, '') || '0';
  const parsed = parseSuffix(suffix);
  if (!parsed) return undefined;
  const { exponent } = parsed;
  let { format } = parsed;
  const negative = sign === '-';

  // ParseQuantity's int64 fast path, which keeps a canonical-looking string as it is.
  let precision: number;
  let scale: number;
  let multiplier = 1n;
  if (format === 'BinarySI') {
    scale = 0;
    if (exponent >= 0 && denom.length === 0) {
      multiplier = 1n << BigInt(exponent);
      precision = 15 - num.length - Math.trunc((exponent * 3) / 10) - 1;
    } else precision = -1;
  } else {
    scale = exponent;
    precision = MAX_INT64_FACTORS - (num.length + denom.length);
  }
  if (precision >= 0) {
    scale -= denom.length;
    if (scale >= NANO) {
      const shifted = num + denom;
      const value = BigInt(shifted);
      const result = value * multiplier;
      if (result <= MAX_INT64) {
        const keep =
          format === 'BinarySI'
            ? exponent % 10 === 0 && (value & 7n) !== 0n
            : scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0';
        if (keep) return str;
        return canonical(negative ? -result : result, scale, format);
      }
    }
  }

  // The general path: exact decimal arithmetic, rounded up to a whole nano.
  let mantissa = BigInt(num + denom);
  let exp = -denom.length;
  if (format === 'BinarySI') mantissa *= 1n << BigInt(exponent);
  else exp += exponent;
  if (exp < NANO && mantissa !== 0n) {
    const divisor = 10n ** BigInt(NANO - exp);
    mantissa = (mantissa + divisor - 1n) / divisor;
    exp = NANO;
  }
  if (format === 'BinarySI' && mantissa > 0n && lessThanOne(mantissa, exp)) format = 'DecimalSI';
  return canonical(negative ? -mantissa : mantissa, exp, format);
}

function parseSuffix(suffix: string): { exponent: number; format: Format } | undefined {
  if (Object.hasOwn(DECIMAL_SUFFIX, suffix))
    return { exponent: DECIMAL_SUFFIX[suffix]!, format: 'DecimalSI' };
  if (Object.hasOwn(BINARY_SUFFIX, suffix)) return { exponent: BINARY_SUFFIX[suffix]!, format: 'BinarySI' };
  const e = /^[eE]([+-]?\d+)$/.exec(suffix);
  if (!e) return undefined;
  return { exponent: Number(e[1]), format: 'DecimalExponent' };
}

function lessThanOne(mantissa: bigint, exp: number): boolean {
  return exp < 0 && mantissa < 10n ** BigInt(-exp);
}

/** `CanonicalizeBytes` of the value `mantissa × 10^exp`. */
function canonical(mantissa: bigint, exp: number, format: Format): string {
  if (mantissa === 0n) return '0';
  const negative = mantissa < 0n;
  let m = negative ? -mantissa : mantissa;
  if (format === 'BinarySI') {
    // Small or fractional binary quantities are shown in decimal, without rounding.
    const integral = exp >= 0 || m % 10n ** BigInt(-exp) === 0n;
    const value = exp >= 0 ? m * 10n ** BigInt(exp) : m / 10n ** BigInt(-exp);
    if (!integral || value < 1024n) format = 'DecimalSI';
    else {
      let v = value;
      let power = 0;
      while (power < BINARY_BY_POWER.length - 1 && v % 1024n === 0n) {
        v /= 1024n;
        power++;
      }
      return `${negative ? '-' : ''}${v}${BINARY_BY_POWER[power]}`;
    }
  }
  // AsCanonicalBytes: trailing zeros into the exponent, then the exponent down to a multiple of 3.
  while (m % 10n === 0n) {
    m /= 10n;
    exp++;
  }
  while (exp % 3 !== 0) {
    m *= 10n;
    exp--;
  }
  let suffix: string;
  if (format === 'DecimalExponent') suffix = exp === 0 ? '' : `e${exp}`;
  else {
    while (exp > 18) {
      m *= 1000n;
      exp -= 3;
    }
    suffix = DECIMAL_BY_EXPONENT.get(exp) ?? '';
  }
  return `${negative ? '-' : ''}${m}${suffix}`;
}

// ---------------------------------------------------------------------------------------------
// Exact arithmetic.

/** A quantity as an exact fraction `num / den`. */
export interface Quantity {
  num: bigint;
  den: bigint;
}

/**
 * Parses a `resource.Quantity` string (`500m`, `1Gi`, `1e3`) or number; undefined when malformed.
 *
 * @example
 * ```ts
 * compareQuantity(parseQuantity('500m')!, parseQuantity('0.5')!); // 0
 * ```
 */
export function parseQuantity(v: unknown): Quantity | undefined {
  const s = typeof v === 'number' ? String(v) : typeof v === 'string' ? v.trim() : undefined;
  if (s === undefined) return undefined;
  const m = /^([+-]?)(\d+\.?\d*|\.\d+)(.*)$/.exec(s);
  if (!m) return undefined;
  const [, sign, number, suffix] = m as unknown as [string, string, string, string];
  const [intPart, fracPart = ''] = number.split('.');
  let num = BigInt(`${intPart || '0'}${fracPart}`);
  let den = 10n ** BigInt(fracPart.length);
  if (Object.hasOwn(BINARY_SUFFIX, suffix)) {
    num *= 2n ** BigInt(BINARY_SUFFIX[suffix]!);
  } else {
    let exp: number;
    if (Object.hasOwn(DECIMAL_SUFFIX, suffix)) exp = DECIMAL_SUFFIX[suffix]!;
    else {
      const e = /^[eE]([+-]?\d+)$/.exec(suffix);
      if (!e) return undefined;
      exp = Number(e[1]);
    }
    if (exp >= 0) num *= 10n ** BigInt(exp);
    else den *= 10n ** BigInt(-exp);
  }
  if (sign === '-') num = -num;
  return { num, den };
}

/** -1, 0 or 1 as `a` is less than, equal to or greater than `b`. */
export function compareQuantity(a: Quantity, b: Quantity): number {
  const l = a.num * b.den;
  const r = b.num * a.den;
  return l < r ? -1 : l > r ? 1 : 0;
}

/** The sum of two quantities. */
export const addQuantity = (a: Quantity, b: Quantity): Quantity => ({
  num: a.num * b.den + b.num * a.den,
  den: a.den * b.den,
});

// ---------------------------------------------------------------------------------------------
// Milli-units: just enough for sums and ratios of CPU and memory.

/** The milli-units of a quantity (`250m` → 250, `1Ki` → 1 024 000); undefined when malformed. */
export function milli(q: string | number | undefined): number | undefined {
  if (q === undefined) return undefined;
  if (typeof q === 'number') return q * 1000;
  const p = parseQuantity(q);
  if (!p) return undefined;
  // Quantities round up to the milli-unit, as `MilliValue()` does (less a float's error margin).
  return Math.ceil(Number(p.num * 1000n) / Number(p.den) - 1e-6);
}

/** Whether a quantity's text uses a binary suffix (its sums print binary too, as Kubernetes keeps the format). */
export const isBinary = (q: string | number | undefined): boolean =>
  typeof q === 'string' && /[KMGTPE]i$/.test(q.trim());

/** The canonical text of `millis` milli-units, binary (`Mi`) or decimal (`m`, `k`, `M`). */
export function formatMilli(millis: number, binary = false): string {
  if (millis % 1000 !== 0) return `${millis}m`;
  const units = millis / 1000;
  if (units === 0) return '0';
  if (binary) {
    for (const s of ['Ei', 'Pi', 'Ti', 'Gi', 'Mi', 'Ki']) {
      const f = 2 ** BINARY_SUFFIX[s]!;
      if (units % f === 0) return `${units / f}${s}`;
    }
    return String(units);
  }
  for (const s of ['E', 'P', 'T', 'G', 'M', 'k']) {
    const f = 10 ** DECIMAL_SUFFIX[s]!;
    if (units % f === 0) return `${units / f}${s}`;
  }
  return String(units);
}
