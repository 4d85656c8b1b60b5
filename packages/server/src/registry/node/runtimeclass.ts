/** node.k8s.io/v1 RuntimeClasses: validation and printer. */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, fieldDoc, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { defineKind } from '../shared/define.js';
import { dig, FIELD_IMMUTABLE, invalid, isDNS1123Label, since, str } from '../shared/util.js';
import type { ResourceType } from '../types.js';

const runtimeclasses: KindBehaviour = {
  /** `ValidateRuntimeClass`: the handler is a DNS label, and immutable. */
  validate(obj, old) {
    const out: StatusCause[] = [];
    const handler = str(obj.handler);
    for (const msg of isDNS1123Label(handler)) out.push(invalid('handler', handler, msg));
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
