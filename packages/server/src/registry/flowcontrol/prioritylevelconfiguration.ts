/**
 * The registry entry of `PriorityLevelConfiguration` (flowcontrol.apiserver.k8s.io/v1 `prioritylevelconfigurations`): its resource type and
 * defaults, validation, printer columns.
 */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, fieldDoc, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { flowcontrolKind } from '../shared/define.js';
import {
  def,
  dig,
  ensureObj,
  forbidden,
  invalid,
  isObj,
  isSet,
  notSupported,
  numOr,
  type Obj,
  required,
  str,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { MANDATORY_PRIORITY_LEVELS } from './bootstrap-objects.js';
import { ageOf, FC, mandatorySpec, nameOf, validateConditions } from './shared.js';

const TYPES = ['Exempt', 'Limited'];
/** Shuffle sharding's hash bits (`shufflesharding.MaxHashBits`). */
const MAX_HASH_BITS = 60;

function percent(v: unknown, path: string): StatusCause[] {
  const n = numOr(v);
  return n !== undefined && (n < 0 || n > 100)
    ? [invalid(path, n, 'must be between 0 and 100, inclusive')]
    : [];
}

/** `ValidateLimitedPriorityLevelConfiguration` and `ValidateLimitResponse`. */
function validateLimited(limited: Obj): StatusCause[] {
  const out: StatusCause[] = [];
  const p = 'spec.limited';
  const shares = numOr(limited.nominalConcurrencyShares) ?? 0;
  if (shares < 0)
    out.push(invalid(`${p}.nominalConcurrencyShares`, shares, 'must be a non-negative integer'));
  const response = isObj(limited.limitResponse) ? limited.limitResponse : {};
  const rt = str(response.type);
  if (rt === 'Reject') {
    if (isSet(response.queuing))
      out.push(
        forbidden(`${p}.limitResponse.queuing`, 'must be nil if limited.limitResponse.type is not Limited'),
      );
  } else if (rt === 'Queue') {
    if (!isObj(response.queuing))
      out.push(
        required(`${p}.limitResponse.queuing`, 'must not be empty if limited.limitResponse.type is Limited'),
      );
    else out.push(...validateQueuing(response.queuing, `${p}.limitResponse.queuing`));
  } else out.push(notSupported(`${p}.limitResponse.type`, rt, ['Queue', 'Reject']));
  out.push(...percent(limited.lendablePercent, `${p}.lendablePercent`));
  const borrowing = numOr(limited.borrowingLimitPercent);
  if (borrowing !== undefined && borrowing < 0)
    out.push(
      invalid(`${p}.borrowingLimitPercent`, borrowing, 'if specified, must be a non-negative integer'),
    );
  return out;
}

/** `ValidatePriorityLevelQueuingConfiguration`, with shuffle sharding's entropy bound. */
function validateQueuing(q: Obj, p: string): StatusCause[] {
  const out: StatusCause[] = [];
  const [limit, queues, hand] = [
    numOr(q.queueLengthLimit) ?? 0,
    numOr(q.queues) ?? 0,
    numOr(q.handSize) ?? 0,
  ];
  if (limit <= 0) out.push(invalid(`${p}.queueLengthLimit`, limit, 'must be positive'));
  if (queues <= 0) out.push(invalid(`${p}.queues`, queues, 'must be positive'));
  else if (queues > 10_000_000) out.push(invalid(`${p}.queues`, queues, 'must not be greater than 10000000'));
  if (hand <= 0) out.push(invalid(`${p}.handSize`, hand, 'must be positive'));
  else if (hand > queues)
    out.push(invalid(`${p}.handSize`, hand, `should not be greater than queues (${queues})`));
  else if (Math.ceil(hand * Math.log2(queues)) > MAX_HASH_BITS)
    out.push(
      invalid(
        `${p}.handSize`,
        hand,
        `required entropy bits of deckSize ${queues} and handSize ${hand} should not be greater than ${MAX_HASH_BITS}`,
      ),
    );
  return out;
}
const prioritylevelconfigurations: KindBehaviour = {
  /** `SetDefaults_{Exempt,Limited}PriorityLevelConfiguration` and `SetDefaults_QueuingConfiguration`. */
  defaults(obj) {
    ensureObj(obj, 'status'); // Go always writes the status struct.
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
  /** `ValidatePriorityLevelConfigurationSpec` (a v1 request: zero nominal shares allowed) and its status. */
  validate(obj) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const out: StatusCause[] = [];
    const type = str(spec.type);
    if ((nameOf(obj) === 'exempt') !== (type === 'Exempt'))
      out.push(invalid('spec.type', type, "type must be 'Exempt' if and only if name is 'exempt'"));
    if (type === 'Exempt') {
      if (isSet(spec.limited)) out.push(forbidden('spec.limited', 'must be nil if the type is not Limited'));
      if (isObj(spec.exempt)) {
        const shares = numOr(spec.exempt.nominalConcurrencyShares);
        if (shares !== undefined && shares < 0)
          out.push(invalid('spec.exempt.nominalConcurrencyShares', shares, 'must not be negative'));
        out.push(...percent(spec.exempt.lendablePercent, 'spec.exempt.lendablePercent'));
      }
    } else if (type === 'Limited') {
      if (isSet(spec.exempt)) out.push(forbidden('spec.exempt', 'must be nil if the type is Limited'));
      if (!isObj(spec.limited)) out.push(required('spec.limited', 'must not be empty when type is Limited'));
      else out.push(...validateLimited(spec.limited));
    } else out.push(notSupported('spec.type', type, TYPES));
    out.push(...mandatorySpec(obj, MANDATORY_PRIORITY_LEVELS, 'flowcontrol.PriorityLevelConfigurationSpec'));
    out.push(...validateConditions(obj));
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
