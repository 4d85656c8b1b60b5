/** coordination.k8s.io/v1 Leases. */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { defineKind } from '../shared/define.js';
import { docs } from '../shared/descriptions.js';
import { dig, invalid, isObj, numOr, since, str } from '../shared/util.js';
import type { ResourceType } from '../types.js';

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

/** `Lease` (coordination.k8s.io/v1 `leases`): how the registry serves, validates and prints it. */
export const leaseKind: ResourceType = defineKind({
  behaviour: leases,
  group: 'coordination.k8s.io',
  version: 'v1',
  defPackage: 'io.k8s.api.coordination.v1',
  resource: 'leases',
  // Its strategy refuses an update without a resourceVersion (AllowUnconditionalUpdate false).
  allowUnconditionalUpdate: false,
  kind: 'Lease',
});
