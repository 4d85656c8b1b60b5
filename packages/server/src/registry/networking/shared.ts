/** Helpers the networking.k8s.io/v1 kinds share: their OpenAPI package, printer cells, references. */
import type { StatusCause } from 'kubeloop/api';
import {
  dig,
  invalid,
  isDNS1123Subdomain,
  isSet,
  isValidPathSegmentName,
  type Obj,
  required,
  since,
  str,
} from '../shared/util.js';

export const NET = 'io.k8s.api.networking.v1';

export const nameOf = (obj: Obj): string => str(dig(obj, 'metadata', 'name'));
export const ageOf = (obj: Obj, now: Date): string => since(dig(obj, 'metadata', 'creationTimestamp'), now);

/**
 * `validateIngressTypedLocalObjectReference` (a resource backend, an IngressClass's parameters):
 * the API group a subdomain, the kind and name given and path segments.
 */
export function validateTypedReference(ref: Obj, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (isSet(ref.apiGroup)) {
    const group = str(ref.apiGroup);
    for (const msg of isDNS1123Subdomain(group)) out.push(invalid(`${path}.apiGroup`, group, msg));
  }
  for (const f of ['kind', 'name']) {
    const v = str(ref[f]);
    if (!v) out.push(required(`${path}.${f}`, `${f} is required`));
    else for (const msg of isValidPathSegmentName(v)) out.push(invalid(`${path}.${f}`, v, msg));
  }
  return out;
}
