/** Helpers the networking.k8s.io/v1 kinds share: their OpenAPI package and printer cells. */
import { dig, type Obj, since, str } from '../shared/util.js';

export const NET = 'io.k8s.api.networking.v1';

export const nameOf = (obj: Obj): string => str(dig(obj, 'metadata', 'name'));
export const ageOf = (obj: Obj, now: Date): string => since(dig(obj, 'metadata', 'creationTimestamp'), now);
