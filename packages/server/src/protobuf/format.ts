/**
 * The JSON forms of apimachinery's time types, written the way their Go MarshalJSON methods write them.
 */
import { ProtoWireError, type Varint } from './wire.js';

/** Unix seconds of Go's zero `time.Time` (January 1, year 1, UTC): its JSON is `null`. */
const GO_ZERO_UNIX = -62135596800;

function utcDate(seconds: number): Date {
  const d = new Date(seconds * 1000);
  const year = d.getUTCFullYear();
  if (Number.isNaN(d.getTime()) || year < 0 || year > 9999) {
    throw new ProtoWireError('Time.MarshalJSON: year outside of range [0,9999]');
  }
  return d;
}

const pad = (n: number, width: number): string => String(n).padStart(width, '0');

function rfc3339(d: Date, fraction: string): string {
  return (
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}` +
    `T${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}${fraction}Z`
  );
}

/**
 * `metav1.Time`: RFC 3339 at second precision in UTC, `null` for the zero time. Its protobuf Unmarshal
 * ignores `nanos` (the JSON form only ever had seconds).
 */
export function formatTime(seconds: number): string | null {
  if (seconds === GO_ZERO_UNIX) return null;
  return rfc3339(utcDate(seconds), '');
}

/** `metav1.MicroTime`: RFC 3339 with six fractional digits (truncated, not rounded), `null` for zero. */
export function formatMicroTime(seconds: number, nanos: number): string | null {
  // time.Unix normalizes nanos outside [0, 1e9) into the seconds.
  const total = BigInt(seconds) * 1_000_000_000n + BigInt(nanos);
  let sec = total / 1_000_000_000n;
  let ns = total % 1_000_000_000n;
  if (ns < 0n) {
    ns += 1_000_000_000n;
    sec -= 1n;
  }
  if (sec === BigInt(GO_ZERO_UNIX) && ns === 0n) return null;
  return rfc3339(utcDate(Number(sec)), `.${pad(Number(ns / 1000n), 6)}`);
}

/** Go's `fmtFrac`: the fraction of v/10^prec without trailing zeros (nothing when it is zero). */
function fraction(v: bigint, prec: number): [string, bigint] {
  let digits = '';
  let print = false;
  for (let i = 0; i < prec; i++) {
    const digit = v % 10n;
    print ||= digit !== 0n;
    if (print) digits = `${digit}${digits}`;
    v /= 10n;
  }
  return [print ? `.${digits}` : '', v];
}

/** `metav1.Duration`: Go's `time.Duration.String()` of the nanoseconds (e.g. `1h0m0s`, `1.5s`, `300ms`). */
export function formatDuration(v: Varint): string {
  const d = BigInt.asIntN(64, (BigInt(v.hi) << 32n) | BigInt(v.lo));
  const neg = d < 0n;
  let u = neg ? -d : d;
  let out: string;
  if (u < 1_000_000_000n) {
    if (u === 0n) return '0s';
    let prec: number;
    let unit: string;
    if (u < 1_000n) [prec, unit] = [0, 'ns'];
    else if (u < 1_000_000n) [prec, unit] = [3, 'µs'];
    else [prec, unit] = [6, 'ms'];
    const [frac, rest] = fraction(u, prec);
    out = `${rest}${frac}${unit}`;
  } else {
    const [frac, secs] = fraction(u, 9);
    u = secs;
    out = `${u % 60n}${frac}s`;
    u /= 60n;
    if (u > 0n) {
      out = `${u % 60n}m${out}`;
      u /= 60n;
      if (u > 0n) out = `${u}h${out}`;
    }
  }
  return neg ? `-${out}` : out;
}
