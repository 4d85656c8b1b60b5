/**
 * The registry entry of `PriorityLevelConfiguration` (flowcontrol.apiserver.k8s.io/v1 `prioritylevelconfigurations`): its resource type and
 * defaults, validation, printer columns.
 */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, fieldDoc, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { flowcontrolKind } from '../shared/define.js';
import { def, dig, ensureObj, isObj, notSupported, numOr, required, str } from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { ageOf, FC, nameOf } from './shared.js';

const TYPES = ['Exempt', 'Limited'];
const prioritylevelconfigurations: KindBehaviour = {
  /** `SetDefaults_{Exempt,Limited}PriorityLevelConfiguration` and `SetDefaults_QueuingConfiguration`. */
  defaults(obj) {
    const spec = ensureObj(obj, 'spec');
    if (isObj(spec.exempt)) {
      def(spec.exempt, 'nominalConcurrencyShares', 0);
      def(spec.exempt, 'lendablePercent', 0);
    }
    if (isObj(spec.limited)) {
      def(spec.limited, 'nominalConcurrencyShares', 30);
      def(spec.limited, 'lendablePercent', 0);
      const queuing = dig(spec.limited, 'limitResponse', 'queuing');
      if (isObj(queuing)) {
        if (!numOr(queuing.handSize)) queuing.handSize = 8;
        if (!numOr(queuing.queues)) queuing.queues = 64;
        if (!numOr(queuing.queueLengthLimit)) queuing.queueLengthLimit = 50;
      }
    }
  },
  validate(obj) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const out: StatusCause[] = [];
    const type = str(spec.type);
    if (!type) out.push(required('spec.type'));
    else if (!TYPES.includes(type)) out.push(notSupported('spec.type', type, TYPES));
    if (type === 'Limited' && !isObj(spec.limited))
      out.push(required('spec.limited', 'must not be empty when type is Limited'));
    if (type === 'Exempt' && isObj(spec.limited))
      out.push({
        reason: 'FieldValueForbidden',
        field: 'spec.limited',
        message: 'Forbidden: must be nil if the type is not Limited',
      });
    if (type === 'Limited' && isObj(spec.exempt))
      out.push({
        reason: 'FieldValueForbidden',
        field: 'spec.exempt',
        message: 'Forbidden: must be nil if the type is Limited',
      });
    const response = dig(spec, 'limited', 'limitResponse');
    if (isObj(response)) {
      const rt = str(response.type);
      if (rt !== 'Queue' && rt !== 'Reject')
        out.push(notSupported('spec.limited.limitResponse.type', rt, ['Queue', 'Reject']));
      if (rt === 'Queue' && !isObj(response.queuing))
        out.push(required('spec.limited.limitResponse.queuing', 'must not be empty if the type is Queue'));
    }
    return out;
  },
  columns: [
    nameColumn(),
    col('Type', 'string', fieldDoc(`${FC}.PriorityLevelConfigurationSpec`, 'type')),
    col(
      'NominalConcurrencyShares',
      'string',
      fieldDoc(`${FC}.LimitedPriorityLevelConfiguration`, 'nominalConcurrencyShares'),
    ),
    col('Queues', 'string', fieldDoc(`${FC}.QueuingConfiguration`, 'queues')),
    col('HandSize', 'string', fieldDoc(`${FC}.QueuingConfiguration`, 'handSize')),
    col('QueueLengthLimit', 'string', fieldDoc(`${FC}.QueuingConfiguration`, 'queueLengthLimit')),
    ageColumn(),
  ],
  row(obj, now) {
    const limited = dig(obj, 'spec', 'limited');
    let ncs: unknown = '<none>';
    let queues: unknown = '<none>';
    let handSize: unknown = '<none>';
    let queueLengthLimit: unknown = '<none>';
    if (isObj(limited)) {
      ncs = numOr(limited.nominalConcurrencyShares) ?? 0;
      const q = dig(limited, 'limitResponse', 'queuing');
      if (isObj(q)) {
        queues = numOr(q.queues) ?? 0;
        handSize = numOr(q.handSize) ?? 0;
        queueLengthLimit = numOr(q.queueLengthLimit) ?? 0;
      }
    }
    return [
      nameOf(obj),
      str(dig(obj, 'spec', 'type')),
      ncs,
      queues,
      handSize,
      queueLengthLimit,
      ageOf(obj, now),
    ];
  },
};

/** `PriorityLevelConfiguration` (flowcontrol.apiserver.k8s.io/v1 `prioritylevelconfigurations`): how the registry serves, validates and prints it. */
export const priorityLevelConfigurationKind: ResourceType = flowcontrolKind({
  behaviour: prioritylevelconfigurations,
  resource: 'prioritylevelconfigurations',
  kind: 'PriorityLevelConfiguration',
});
