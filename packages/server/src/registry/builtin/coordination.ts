/** coordination.k8s.io/v1 Leases. */
import type { StatusCause } from 'kubeloop/api';
import { docs } from './descriptions.js';
import { ageColumn, col, type KindBehaviour, nameColumn } from './types.js';
import { dig, invalid, isObj, numOr, since, str } from './util.js';

const leases: KindBehaviour = {
  validate(obj) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const out: StatusCause[] = [];
    const duration = numOr(spec.leaseDurationSeconds);
    if (duration !== undefined && duration <= 0)
      out.push(invalid('spec.leaseDurationSeconds', duration, 'must be greater than 0'));
    const transitions = numOr(spec.leaseTransitions);
    if (transitions !== undefined && transitions < 0) {
      out.push(invalid('spec.leaseTransitions', transitions, 'must be greater than or equal to 0'));
    }
    return out;
  },
  columns: [nameColumn(), col('Holder', 'string', docs.leaseSpec.holderIdentity), ageColumn()],
  row: (obj, now) => [
    str(dig(obj, 'metadata', 'name')),
    str(dig(obj, 'spec', 'holderIdentity')),
    since(dig(obj, 'metadata', 'creationTimestamp'), now),
  ],
};

/** coordination.k8s.io/v1 behaviours, keyed by plural resource. */
export const coordinationBehaviours: Record<string, KindBehaviour> = { leases };
