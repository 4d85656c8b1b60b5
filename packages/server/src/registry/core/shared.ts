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
