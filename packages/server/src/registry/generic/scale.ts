/**
 * The scale subresource of the generic registry (`ScaleREST`): an object's replicas and selector
 * seen as an `autoscaling/v1` Scale, at the JSON paths the kind (or the CRD) names.
 */
import { ApiError, formatLabelSelector, labelSelectorFromObject } from 'kubeloop/api';
import { getPath, isObject, type Obj } from '../../util/object.js';
import type { ResourceType } from '../types.js';

/** ScaleREST's marker of a custom resource without spec replicas (the smallest int32). */
export const ABSENT_SPEC_REPLICAS = -2147483648;

/** `o` (an object of `t`, which has a scale subresource) as a Scale. */
export function scaleOf(t: ResourceType, o: Obj): Obj {
  const scaleSpec = t.subresources.scale!;
  const m = o.metadata as Obj;
  const sel = scaleSpec.labelSelectorPath ? getPath(o, scaleSpec.labelSelectorPath) : undefined;
  const selector =
    typeof sel === 'string'
      ? sel
      : isObject(sel)
        ? formatLabelSelector(labelSelectorFromObject(sel))
        : undefined;
  return {
    kind: 'Scale',
    apiVersion: 'autoscaling/v1',
    metadata: {
      name: m.name,
      ...(m.namespace !== undefined && { namespace: m.namespace }),
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      creationTimestamp: m.creationTimestamp,
    },
    spec: { replicas: (getPath(o, scaleSpec.specReplicasPath) as number | undefined) ?? 0 },
    status: {
      replicas: (getPath(o, scaleSpec.statusReplicasPath) as number | undefined) ?? 0,
      ...(selector !== undefined && { selector }),
    },
  };
}

/** The replicas a written Scale asks for, checked as ScaleREST.Update decodes and validates them. */
export function requestedReplicas(t: ResourceType, name: string, scale: Obj): number {
  let replicas = isObject(scale.spec) ? scale.spec.replicas : undefined;
  if (t.custom) {
    // A custom resource's Scale is only decoded (an int32, 0 when absent); the resource's own
    // validation judges the value it lands in.
    if (replicas === ABSENT_SPEC_REPLICAS)
      throw ApiError.badRequest(
        `the spec replicas field ${JSON.stringify(t.subresources.scale!.specReplicasPath)} cannot be empty`,
      );
    replicas ??= 0;
  }
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || (replicas < 0 && !t.custom)) {
    throw ApiError.invalid({ group: 'autoscaling', kind: 'Scale' }, name, [
      {
        reason: 'FieldValueInvalid',
        field: 'spec.replicas',
        message: `Invalid value: ${String(replicas)}: must be greater than or equal to 0`,
      },
    ]);
  }
  return replicas;
}

/**
 * The Scale of an object as `GET …/scale` reads it. A custom resource without spec replicas has
 * no Scale to read (ScaleREST.Get: a 500); `forUpdate` (the base of a patch) marks the replicas
 * as absent instead, as ScaleREST.Update does.
 */
export function readScale(t: ResourceType, o: Obj, forUpdate: boolean): Obj {
  const scale = scaleOf(t, o);
  const path = t.subresources.scale!.specReplicasPath;
  if (t.custom && getPath(o, path) === undefined) {
    if (!forUpdate) throw ApiError.internal(`the spec replicas field ${JSON.stringify(path)} does not exist`);
    (scale.spec as Obj).replicas = ABSENT_SPEC_REPLICAS;
  }
  return scale;
}
