import { ApiError } from 'kubeloop/api';
import type { ResourceType } from '../registry/types.js';
import type { Obj } from '../util/object.js';

/**
 * An admission plugin's refusal (`admission.NewForbidden`): a 403 naming the object as
 * `extractResourceName` does. A create's name may not be generated yet, so a `generateName`
 * create is named by its prefix, and an object with neither is "Unknown".
 */
export function admissionForbidden(t: ResourceType, obj: Obj, message: string): ApiError {
  const m = (obj.metadata ?? {}) as Obj;
  const name =
    typeof m.name === 'string' && m.name
      ? m.name
      : typeof m.generateName === 'string' && m.generateName
        ? m.generateName
        : 'Unknown';
  return ApiError.forbidden({ group: t.group, resource: t.resource }, name, message);
}
