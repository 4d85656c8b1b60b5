/**
 * The registry entry of `ResourceQuota` (core/v1 `resourcequotas`): its resource type and
 * validation, printer columns.
 */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { coreKind } from '../shared/define.js';
import { specStatusStrategy } from '../shared/status-strategy.js';
import {
  dig,
  invalid,
  isObj,
  isQualifiedName,
  notSupported,
  type Obj,
  parseQuantity,
  since,
  str,
  strs,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { quantityText } from './shared.js';

// ---------------------------------------------------------------------------------------------
// ResourceQuotas
/** `helper.IsStandardQuotaResourceName`'s names (hugepages- ones are matched by prefix). */
const STANDARD_QUOTA_RESOURCES = new Set([
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.storage',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
  'pods',
  'services',
  'replicationcontrollers',
  'resourcequotas',
  'secrets',
  'persistentvolumeclaims',
  'configmaps',
  'services.nodeports',
  'services.loadbalancers',
]);
/** `helper.IsIntegerResourceName`: object counts, which must be whole numbers. */
const INTEGER_RESOURCES = new Set([
  'pods',
  'services',
  'replicationcontrollers',
  'resourcequotas',
  'secrets',
  'persistentvolumeclaims',
  'configmaps',
  'services.nodeports',
  'services.loadbalancers',
]);
const isStandardQuotaName = (n: string): boolean =>
  STANDARD_QUOTA_RESOURCES.has(n) || n.startsWith('hugepages-') || n.startsWith('requests.hugepages-');
/** `validateResourceQuotaResourceName` and `ValidateResourceQuantityValue` over a hard/used list. */
function validateQuotaList(list: unknown, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (!isObj(list)) return out;
  for (const [name, value] of Object.entries(list)) {
    const field = `${path}[${name}]`;
    // validateResourceName, then the quota's own rule whatever it found.
    const nameErrs = isQualifiedName(name);
    for (const msg of nameErrs) out.push(invalid(field, name, msg));
    if (nameErrs.length === 0 && !name.includes('/') && !isStandardQuotaName(name) && name !== 'storage')
      out.push(invalid(field, name, 'must be a standard resource type or fully qualified'));
    if (!name.includes('/') && !isStandardQuotaName(name))
      out.push(invalid(field, name, 'must be a standard resource for quota'));
    const q = parseQuantity(value);
    if (q && q.num < 0n) out.push(invalid(field, quantityText(value), 'must be greater than or equal to 0'));
    if (q && INTEGER_RESOURCES.has(name) && (q.num * 1000n) % q.den !== 0n)
      out.push(invalid(field, quantityText(value), 'must be an integer'));
    else if (q && INTEGER_RESOURCES.has(name) && q.num % q.den !== 0n)
      out.push(invalid(field, quantityText(value), 'must be an integer'));
  }
  return out;
}
const QUOTA_SCOPES = [
  'BestEffort',
  'CrossNamespacePodAffinity',
  'NotBestEffort',
  'NotTerminating',
  'PriorityClass',
  'Terminating',
];
const resourcequotas: KindBehaviour = {
  validate(obj) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const out = [
      ...validateQuotaList(spec.hard, 'spec.hard'),
      ...validateQuotaList(dig(obj, 'status', 'hard'), 'status.hard'),
      ...validateQuotaList(dig(obj, 'status', 'used'), 'status.used'),
    ];
    for (const scope of strs(spec.scopes))
      if (!QUOTA_SCOPES.includes(scope)) out.push(notSupported('spec.scopes', scope, QUOTA_SCOPES));
    return out;
  },
  columns: [
    nameColumn(),
    ageColumn(),
    col(
      'Request',
      'string',
      'Request represents a minimum amount of cpu/memory that a container may consume.',
    ),
    col(
      'Limit',
      'string',
      'Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.',
    ),
  ],
  row(obj, now) {
    const hard = isObj(dig(obj, 'spec', 'hard')) ? (dig(obj, 'spec', 'hard') as Obj) : {};
    const used = isObj(dig(obj, 'status', 'used')) ? (dig(obj, 'status', 'used') as Obj) : {};
    const requests: string[] = [];
    const limits: string[] = [];
    for (const name of Object.keys(hard).sort()) {
      const cell = `${name}: ${used[name] === undefined ? '0' : quantityText(used[name])}/${quantityText(hard[name])}`;
      (name.startsWith('limits.') ? limits : requests).push(cell);
    }
    return [
      str(dig(obj, 'metadata', 'name')),
      since(dig(obj, 'metadata', 'creationTimestamp'), now),
      requests.join(', '),
      limits.join(', '),
    ];
  },
};

/** `ResourceQuota` (core/v1 `resourcequotas`): how the registry serves, validates and prints it. */
export const resourceQuotaKind: ResourceType = coreKind({
  statusStrategy: specStatusStrategy,
  behaviour: resourcequotas,
  resource: 'resourcequotas',
  kind: 'ResourceQuota',
  shortNames: ['quota'],
  subresources: { status: true },
  returnDeletedObject: true,
});
