/** Helpers the storage.k8s.io/v1 kinds share: their OpenAPI package, printer cells, CSI names. */
import { dig, type Obj, since, str } from '../shared/util.js';

export const STORAGE = 'io.k8s.api.storage.v1';

export const nameOf = (obj: Obj): string => str(dig(obj, 'metadata', 'name'));
export const ageOf = (obj: Obj, now: Date): string => since(dig(obj, 'metadata', 'creationTimestamp'), now);

export { validateCSIDriverName } from '../core/volume-sources.js';
