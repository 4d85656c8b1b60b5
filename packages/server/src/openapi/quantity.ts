/**
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
