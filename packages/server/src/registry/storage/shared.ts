/** Helpers the storage.k8s.io/v1 kinds share: their OpenAPI package, printer cells, CSI names. */
import type { StatusCause } from 'kubeloop/api';
import { dig, invalid, isDNS1123Subdomain, type Obj, required, since, str, tooLong } from '../shared/util.js';

export const STORAGE = 'io.k8s.api.storage.v1';

export const nameOf = (obj: Obj): string => str(dig(obj, 'metadata', 'name'));
export const ageOf = (obj: Obj, now: Date): string => since(dig(obj, 'metadata', 'creationTimestamp'), now);

/** core's `ValidateCSIDriverName`: required, at most 63 bytes, a subdomain once lowercased. */
export function validateCSIDriverName(name: string, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (!name) out.push(required(path));
  if (Buffer.byteLength(name) > 63) out.push(tooLong(path, 63));
  for (const msg of isDNS1123Subdomain(name.toLowerCase())) out.push(invalid(path, name, msg));
  return out;
}
