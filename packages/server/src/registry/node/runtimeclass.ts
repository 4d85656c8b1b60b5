/** node.k8s.io/v1 RuntimeClasses: validation and printer. */
import type { StatusCause } from 'kubeloop/api';
import { validateResources } from '../core/podspec.js';
import { goToleration, validateTolerations } from '../core/podspec-affinity.js';
import { ageColumn, col, fieldDoc, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { defineKind } from '../shared/define.js';
import {
  dig,
  duplicate,
  FIELD_IMMUTABLE,
  GoValue,
  invalid,
  isDNS1123Label,
  isObj,
  isSet,
  type Obj,
  objs,
  since,
  str,
  validateLabels,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';

/** `validateScheduling`: node selector labels, tolerations (kube's path says `tolerations` twice), each once. */
function validateScheduling(scheduling: Obj): StatusCause[] {
  const out: StatusCause[] = [];
  if (isSet(scheduling.nodeSelector))
    out.push(...validateLabels(scheduling.nodeSelector, 'scheduling.nodeSelector'));
  out.push(...validateTolerations(scheduling.tolerations, 'scheduling.tolerations.tolerations'));
  const seen = new Set<string>();
  objs(scheduling.tolerations).forEach((t, i) => {
    const key = JSON.stringify([t.key, t.operator, t.value, t.effect].map(str));
    if (seen.has(key)) out.push(duplicate(`scheduling.tolerations[${i}]`, new GoValue(goToleration(t))));
    seen.add(key);
  });
  return out;
}

const runtimeclasses: KindBehaviour = {
  /** `ValidateRuntimeClass`: the handler a DNS label (and immutable), the overhead, the scheduling. */
  validate(obj, old) {
    const out: StatusCause[] = [];
    const handler = str(obj.handler);
    for (const msg of isDNS1123Label(handler)) out.push(invalid('handler', handler, msg));
    // The pod's fixed overhead is checked as a container's limits.
    if (isObj(obj.overhead)) out.push(...validateResources({ limits: obj.overhead.podFixed }, 'overhead'));
    if (isObj(obj.scheduling)) out.push(...validateScheduling(obj.scheduling));
    if (old && old.handler !== obj.handler) out.push(invalid('handler', handler, FIELD_IMMUTABLE));
    return out;
  },
  columns: [
    nameColumn(),
    col('Handler', 'string', fieldDoc('io.k8s.api.node.v1.RuntimeClass', 'handler')),
    ageColumn(),
  ],
  row: (obj, now) => [
    str(dig(obj, 'metadata', 'name')),
    str(obj.handler),
    since(dig(obj, 'metadata', 'creationTimestamp'), now),
  ],
};

/** `RuntimeClass` (node.k8s.io/v1 `runtimeclasses`): how the registry serves, validates and prints it. */
export const runtimeClassKind: ResourceType = defineKind({
  behaviour: runtimeclasses,
  group: 'node.k8s.io',
  version: 'v1',
  defPackage: 'io.k8s.api.node.v1',
  resource: 'runtimeclasses',
  kind: 'RuntimeClass',
  namespaced: false,
});
