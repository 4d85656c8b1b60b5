/**
 * The registry entry of `LimitRange` (core/v1 `limitranges`): its resource type and
 * defaults, validation.
 */
import { isQualifiedName, type StatusCause } from 'kubeloop/api';
import type { KindBehaviour } from '../shared/behaviour.js';
import { createdAtBehaviour } from '../shared/default.js';
import { coreKind } from '../shared/define.js';
import {
  compareQuantity,
  dig,
  duplicate,
  forbidden,
  GoValue,
  invalid,
  isObj,
  type Obj,
  objs,
  parseQuantity,
  required,
  str,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { goQuantity, quantityText } from './shared.js';

/** A quantity as kube prints it in a field error (Go's `%#v`), or its text where kube would print a pointer. */
const goValueOf = (text: string): unknown => {
  const go = goQuantity(text);
  return go === undefined ? text : new GoValue(go);
};

// ---------------------------------------------------------------------------------------------
// LimitRanges (no printer in printers.go: Name and Created At).
const LIMIT_TYPES = ['Container', 'Pod', 'PersistentVolumeClaim'];
/** `SetDefaults_LimitRangeItem`: a container's default limit from max, default request from default/min. */
function defaultLimitRange(obj: Obj): void {
  for (const item of objs(dig(obj, 'spec', 'limits'))) {
    if (item.type !== 'Container') continue;
    const dflt: Obj = isObj(item.default) ? { ...item.default } : {};
    const request: Obj = isObj(item.defaultRequest) ? { ...item.defaultRequest } : {};
    for (const [k, v] of Object.entries(isObj(item.max) ? item.max : {})) if (!(k in dflt)) dflt[k] = v;
    for (const [k, v] of Object.entries(dflt)) if (!(k in request)) request[k] = v;
    for (const [k, v] of Object.entries(isObj(item.min) ? item.min : {})) if (!(k in request)) request[k] = v;
    if (Object.keys(dflt).length > 0) item.default = dflt;
    if (Object.keys(request).length > 0) item.defaultRequest = request;
  }
}
const STANDARD_CONTAINER_RESOURCES = new Set(['cpu', 'memory', 'ephemeral-storage']);
const STANDARD_RESOURCES = new Set([
  ...STANDARD_CONTAINER_RESOURCES,
  'requests.cpu',
  'requests.memory',
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
  'storage',
  'requests.storage',
  'services.nodeports',
  'services.loadbalancers',
]);

/** `validateLimitRangeResourceName`: a container's (or pod's) resource, else any standard or qualified one. */
export function resourceName(type: string, name: string, field: string): StatusCause[] {
  const out = isQualifiedName(name).map((m) => invalid(field, name, m));
  const hugePages = name.startsWith('hugepages-');
  if (out.length === 0 && !name.includes('/') && !STANDARD_RESOURCES.has(name) && !hugePages)
    out.push(invalid(field, name, 'must be a standard resource type or fully qualified'));
  if (out.length > 0 && type !== 'Container' && type !== 'Pod') return out;
  if (type === 'Container' || type === 'Pod') {
    if (!name.includes('/')) {
      if (!STANDARD_CONTAINER_RESOURCES.has(name) && !hugePages)
        out.push(invalid(field, name, 'must be a standard resource for containers'));
    } else if (!name.includes('kubernetes.io/')) {
      const extended = !name.startsWith('requests.') && isQualifiedName(`requests.${name}`).length === 0;
      if (!extended) out.push(invalid(field, name, "doesn't follow extended resource name standard"));
    }
  }
  return out;
}

/** `ValidateLimitRange`: one item per type, and min ≤ default request ≤ default ≤ max per resource. */
function validateLimitRange(obj: Obj): StatusCause[] {
  const out: StatusCause[] = [];
  const seen = new Set<string>();
  objs(dig(obj, 'spec', 'limits')).forEach((item, i) => {
    const path = `spec.limits[${i}]`;
    const type = str(item.type);
    // validateLimitRangeTypeName: a qualified name, standard unless fully qualified.
    const typeErrs = isQualifiedName(type);
    for (const m of typeErrs) out.push(invalid(`${path}.type`, type, m));
    if (typeErrs.length === 0 && !type.includes('/') && !LIMIT_TYPES.includes(type))
      out.push(invalid(`${path}.type`, type, 'must be a standard limit type or fully qualified'));
    if (seen.has(type)) out.push(duplicate(`${path}.type`, type));
    seen.add(type);
    const names = (f: string) => {
      if (isObj(item[f]))
        for (const k of Object.keys(item[f] as Obj)) out.push(...resourceName(type, k, `${path}.${f}[${k}]`));
    };
    names('max');
    names('min');
    if (type !== 'Pod') {
      names('default');
      names('defaultRequest');
    }
    if (
      type === 'PersistentVolumeClaim' &&
      dig(item, 'min', 'storage') === undefined &&
      dig(item, 'max', 'storage') === undefined
    )
      out.push(
        required(
          `${path}.limits`,
          'either minimum or maximum storage value is required, but neither was provided',
        ),
      );
    names('maxLimitRequestRatio');
    const get = (field: string, k: string) => {
      const m = item[field];
      return isObj(m) && m[k] !== undefined
        ? { text: quantityText(m[k]), q: parseQuantity(m[k]), go: goValueOf(quantityText(m[k])) }
        : undefined;
    };
    const keys = new Set<string>();
    for (const f of ['max', 'min', 'default', 'defaultRequest', 'maxLimitRequestRatio'])
      if (isObj(item[f])) for (const k of Object.keys(item[f] as Obj)) keys.add(k);
    if (type === 'Pod') {
      for (const f of ['default', 'defaultRequest'])
        if (isObj(item[f]) && Object.keys(item[f] as Obj).length > 0)
          out.push(forbidden(`${path}.${f}`, "may not be specified when `type` is 'Pod'"));
    }
    for (const k of [...keys].sort()) {
      const min = get('min', k);
      const max = get('max', k);
      const dflt = get('default', k);
      const req = get('defaultRequest', k);
      const gt = (
        a?: { q?: ReturnType<typeof parseQuantity> },
        b?: { q?: ReturnType<typeof parseQuantity> },
      ) => a?.q !== undefined && b?.q !== undefined && compareQuantity(a.q, b.q) > 0;
      if (gt(min, max))
        out.push(
          invalid(
            `${path}.min[${k}]`,
            min!.go,
            `min value ${min!.text} is greater than max value ${max!.text}`,
          ),
        );
      if (gt(min, req))
        out.push(
          invalid(
            `${path}.defaultRequest[${k}]`,
            req!.go,
            `min value ${min!.text} is greater than default request value ${req!.text}`,
          ),
        );
      if (gt(req, max))
        out.push(
          invalid(
            `${path}.defaultRequest[${k}]`,
            req!.go,
            `default request value ${req!.text} is greater than max value ${max!.text}`,
          ),
        );
      if (gt(req, dflt))
        out.push(
          invalid(
            `${path}.defaultRequest[${k}]`,
            req!.go,
            `default request value ${req!.text} is greater than default limit value ${dflt!.text}`,
          ),
        );
      if (gt(min, dflt))
        out.push(
          invalid(
            `${path}.default[${k}]`,
            // kube gives the other side's quantity as the value of these two.
            min!.go,
            `min value ${min!.text} is greater than default value ${dflt!.text}`,
          ),
        );
      if (gt(dflt, max))
        out.push(
          invalid(
            `${path}.default[${k}]`,
            max!.go,
            `default value ${dflt!.text} is greater than max value ${max!.text}`,
          ),
        );
      const ratio = get('maxLimitRequestRatio', k);
      if (ratio?.q && ratio.q.num < ratio.q.den)
        out.push(
          invalid(`${path}.maxLimitRequestRatio[${k}]`, ratio.go, `ratio ${ratio.text} is less than 1`),
        );
    }
  });
  return out;
}
const limitranges: KindBehaviour = {
  ...createdAtBehaviour(),
  defaults: defaultLimitRange,
  validate: validateLimitRange,
};

/** `LimitRange` (core/v1 `limitranges`): how the registry serves, validates and prints it. */
export const limitRangeKind: ResourceType = coreKind({
  behaviour: limitranges,
  resource: 'limitranges',
  kind: 'LimitRange',
  shortNames: ['limits'],
  returnDeletedObject: true,
});
