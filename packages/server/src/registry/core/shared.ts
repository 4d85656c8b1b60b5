/** Helpers the core/v1 kinds share: printer cells (age, name), data-key and immutability checks of ConfigMaps and Secrets, protocols, quantity text. */
import type { StatusCause } from 'kubeloop/api';
import {
  dig,
  forbidden,
  invalid,
  isConfigMapKey,
  isObj,
  jsonEqual,
  type Obj,
  since,
  str,
} from '../shared/util.js';

export const MAX_SECRET_SIZE = 1024 * 1024;
export const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const IMMUTABLE_WHEN_SET = 'field is immutable when `immutable` is set';

export function age(obj: Obj, now: Date): string {
  return since(dig(obj, 'metadata', 'creationTimestamp'), now);
}
export const nameOf = (obj: Obj): string => str(dig(obj, 'metadata', 'name'));

// ---------------------------------------------------------------------------------------------
// ConfigMaps and Secrets

export function validateKeys(data: unknown, field: string): StatusCause[] {
  const out: StatusCause[] = [];
  for (const key of Object.keys(isObj(data) ? data : {})) {
    for (const m of isConfigMapKey(key)) out.push(invalid(`${field}[${key}]`, key, m));
  }
  return out;
}

export function immutableUpdate(obj: Obj, old: Obj | undefined, fields: string[]): StatusCause[] {
  if (old?.immutable !== true) return [];
  const out: StatusCause[] = [];
  if (obj.immutable !== true) out.push(forbidden('immutable', IMMUTABLE_WHEN_SET));
  for (const f of fields)
    if (!jsonEqual(obj[f] ?? {}, old[f] ?? {})) out.push(forbidden(f, IMMUTABLE_WHEN_SET));
  return out;
}
export const quantityText = (v: unknown): string => (typeof v === 'number' ? String(v) : str(v));

const SI_EXPONENTS: Record<string, number> = {
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
const BINARY_EXPONENTS: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };

/**
 * Go's `%#v` of a `resource.Quantity` as `ParseQuantity` builds it from `text` (how kube words a
 * quantity given as a field error's value): its int64 amount, and the string cached when the text
 * was already canonical. Undefined where kube would hold an inf.Dec (printed as a pointer).
 */
export function goQuantity(text: string): string | undefined {
  const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]?)|[eE]([+-]?\d+))$/.exec(text.trim());
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return undefined;
  const [, sign, num, denom = '', suffix = '', exp] = m;
  const binary = suffix.endsWith('i');
  const format = exp !== undefined ? 'DecimalExponent' : binary ? 'BinarySI' : 'DecimalSI';
  const exponent =
    exp !== undefined ? Number(exp) : binary ? BINARY_EXPONENTS[suffix]! : SI_EXPONENTS[suffix]!;
  let value: bigint;
  let scale: number;
  let canonical: boolean;
  if (binary) {
    if (denom !== '') return undefined;
    value = BigInt(num || '0') << BigInt(exponent);
    scale = 0;
    canonical = exponent % 10 === 0 && (BigInt(num || '0') & 7n) !== 0n;
  } else {
    const shifted = `${num}${denom}`;
    scale = exponent - denom.length;
    if (scale < -9) return undefined;
    value = BigInt(shifted || '0');
    canonical = scale % 3 === 0 && !shifted.endsWith('000') && shifted[0] !== '0';
  }
  if (value >= 2n ** 63n) return undefined;
  if (sign === '-') value = -value;
  const s = canonical ? text.trim() : '';
  return `resource.Quantity{i:resource.int64Amount{value:${value}, scale:${scale}}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:${JSON.stringify(s)}, Format:${JSON.stringify(format)}}`;
}
