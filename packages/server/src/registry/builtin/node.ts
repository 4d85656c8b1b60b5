/** node.k8s.io/v1 RuntimeClasses: validation and printer. */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, fieldDoc, type KindBehaviour, nameColumn } from './types.js';
import { dig, FIELD_IMMUTABLE, invalid, isDNS1123Label, since, str } from './util.js';

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

/** node.k8s.io/v1 behaviours, keyed by plural resource. */
export const nodeBehaviours: Record<string, KindBehaviour> = { runtimeclasses };
