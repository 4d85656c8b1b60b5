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
  ensureObj,
  GoValue,
  goQuote,
  goStrings,
  invalid,
  isObj,
  isQualifiedName,
  type Obj,
  objs,
  parseQuantity,
  required,
  since,
  str,
  strs,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { goQuantity, quantityText } from './shared.js';

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
    out.push(...validateQuantityValue(name, value, field));
  }
  return out;
}

/** `ValidateResourceQuantityValue`: not negative, whole for integer resources (shown as Go shows a Quantity). */
export function validateQuantityValue(name: string, value: unknown, field: string): StatusCause[] {
  const q = parseQuantity(value);
  if (!q) return [];
  const out: StatusCause[] = [];
  const text = quantityText(value);
  if (q.num < 0n) out.push(invalid(field, text, 'must be greater than or equal to 0'));
  // `MilliValue() % 1000`, MilliValue rounding up.
  const scaled = q.num * 1000n;
  const milli = scaled >= 0n ? (scaled + q.den - 1n) / q.den : scaled / q.den;
  if (isIntegerResource(name) && milli % 1000n !== 0n)
    out.push(invalid(field, new GoValue(goQuantity(text) ?? goQuote(text)), 'must be an integer'));
  return out;
}

/** `helper.IsIntegerResourceName`: the counted resources and extended resources. */
function isIntegerResource(name: string): boolean {
  if (INTEGER_RESOURCES.has(name)) return true;
  const native = !name.includes('/') || name.includes('kubernetes.io/');
  return !native && !name.startsWith('requests.') && isQualifiedName(`requests.${name}`).length === 0;
}

const QUOTA_SCOPES = [
  'BestEffort',
  'CrossNamespacePodAffinity',
  'NotBestEffort',
  'NotTerminating',
  'PriorityClass',
  'Terminating',
];
const POD_COMPUTE = ['cpu', 'memory', 'limits.cpu', 'limits.memory', 'requests.cpu', 'requests.memory'];
const EXISTS_ONLY = [
  'BestEffort',
  'NotBestEffort',
  'Terminating',
  'NotTerminating',
  'CrossNamespacePodAffinity',
];
const CONFLICTING = [
  ['BestEffort', 'NotBestEffort'],
  ['Terminating', 'NotTerminating'],
];

/** `helper.IsResourceQuotaScopeValidForResource`. */
function scopeFits(scope: string, resource: string): boolean {
  if (scope === 'BestEffort') return resource === 'pods';
  if (
    ['Terminating', 'NotTerminating', 'NotBestEffort', 'PriorityClass', 'CrossNamespacePodAffinity'].includes(
      scope,
    )
  )
    return resource === 'pods' || POD_COMPUTE.includes(resource);
  return true;
}

/**
 * What `validateResourceQuotaScopes` and `validateScopedResourceSelectorRequirement` share: each
 * scope known and fitting every standard hard resource, and no conflicting pair.
 */
function scopeErrors(
  scopes: string[],
  hard: string[],
  value: GoValue,
  path: string,
  scopePath: (s: string) => StatusCause[],
): StatusCause[] {
  const out: StatusCause[] = [];
  for (const scope of scopes) {
    out.push(...scopePath(scope));
    for (const resource of hard)
      if (isStandardQuotaName(resource) && !scopeFits(scope, resource))
        out.push(invalid(path, value, 'unsupported scope applied to resource'));
  }
  return out;
}

function validateScopes(spec: Obj): StatusCause[] {
  const scopes = strs(spec.scopes);
  if (scopes.length === 0) return [];
  const hard = Object.keys(isObj(spec.hard) ? spec.hard : {}).sort();
  const value = new GoValue(`[]core.ResourceQuotaScope{${scopes.map(goQuote).join(', ')}}`);
  const out = scopeErrors(scopes, hard, value, 'spec.scopes', (scope) =>
    QUOTA_SCOPES.includes(scope) ? [] : [invalid('spec.scopes', value, 'unsupported scope')],
  );
  for (const pair of CONFLICTING)
    if (pair.every((s) => scopes.includes(s))) out.push(invalid('spec.scopes', value, 'conflicting scopes'));
  return out;
}

function validateScopeSelector(spec: Obj): StatusCause[] {
  if (!isObj(spec.scopeSelector)) return [];
  const p = 'spec.scopeSelector.matchExpressions';
  const hard = Object.keys(isObj(spec.hard) ? spec.hard : {}).sort();
  // kube shows a *core.ScopeSelector, an address; here its content.
  const value = new GoValue(
    `&core.ScopeSelector{MatchExpressions:${JSON.stringify(spec.scopeSelector.matchExpressions ?? null)}}`,
  );
  const out: StatusCause[] = [];
  const names: string[] = [];
  for (const req of objs(spec.scopeSelector.matchExpressions)) {
    const scope = str(req.scopeName);
    const op = str(req.operator);
    out.push(
      ...scopeErrors([scope], hard, value, p, (s) =>
        QUOTA_SCOPES.includes(s) ? [] : [invalid(`${p}.scopeName`, s, 'unsupported scope')],
      ),
    );
    if (EXISTS_ONLY.includes(scope) && op !== 'Exists')
      out.push(
        invalid(
          `${p}.operator`,
          op,
          "must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
        ),
      );
    const values = strs(req.values);
    if (op === 'In' || op === 'NotIn') {
      if (values.length === 0)
        out.push(
          required(
            `${p}.values`,
            "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
          ),
        );
    } else if (op === 'Exists' || op === 'DoesNotExist') {
      if (values.length > 0)
        out.push(
          invalid(
            `${p}.values`,
            new GoValue(goStrings(values)),
            "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
          ),
        );
    } else out.push(invalid(`${p}.operator`, op, 'not a valid selector operator'));
    names.push(scope);
  }
  for (const pair of CONFLICTING)
    if (pair.every((s) => names.includes(s))) out.push(invalid(p, value, 'conflicting scopes'));
  return out;
}

const resourcequotas: KindBehaviour = {
  /** Go always writes the status struct: `{}` before the quota controller fills it. */
  defaults(obj) {
    ensureObj(obj, 'status');
  },
  validate(obj) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    return [
      ...validateQuotaList(spec.hard, 'spec.hard'),
      ...validateScopes(spec),
      ...validateScopeSelector(spec),
      ...validateQuotaList(dig(obj, 'status', 'hard'), 'status.hard'),
      ...validateQuotaList(dig(obj, 'status', 'used'), 'status.used'),
    ];
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
