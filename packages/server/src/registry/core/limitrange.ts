/**
 * The registry entry of `LimitRange` (core/v1 `limitranges`): its resource type and
 * defaults, validation.
 */
import type { StatusCause } from 'kubeloop/api';
import type { KindBehaviour } from '../shared/behaviour.js';
import { createdAtBehaviour } from '../shared/default.js';
import { coreKind } from '../shared/define.js';
import {
  compareQuantity,
  dig,
  duplicate,
  forbidden,
  invalid,
  isObj,
  notSupported,
  type Obj,
  objs,
  parseQuantity,
  str,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { quantityText } from './shared.js';

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
/** `ValidateLimitRange`: one item per type, and min ≤ default request ≤ default ≤ max per resource. */
function validateLimitRange(obj: Obj): StatusCause[] {
  const out: StatusCause[] = [];
  const seen = new Set<string>();
  objs(dig(obj, 'spec', 'limits')).forEach((item, i) => {
    const path = `spec.limits[${i}]`;
    const type = str(item.type);
    if (seen.has(type)) out.push(duplicate(`${path}.type`, type));
    seen.add(type);
    if (!LIMIT_TYPES.includes(type) && !type.includes('/'))
      out.push(notSupported(`${path}.type`, type, LIMIT_TYPES));
    const get = (field: string, k: string) => {
      const m = item[field];
      return isObj(m) && m[k] !== undefined
        ? { text: quantityText(m[k]), q: parseQuantity(m[k]) }
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
            min!.text,
            `min value ${min!.text} is greater than max value ${max!.text}`,
          ),
        );
      if (gt(min, req))
        out.push(
          invalid(
            `${path}.defaultRequest[${k}]`,
            req!.text,
            `min value ${min!.text} is greater than default request value ${req!.text}`,
          ),
        );
      if (gt(req, max))
        out.push(
          invalid(
            `${path}.defaultRequest[${k}]`,
            req!.text,
            `default request value ${req!.text} is greater than max value ${max!.text}`,
          ),
        );
      if (gt(req, dflt))
        out.push(
          invalid(
            `${path}.defaultRequest[${k}]`,
            req!.text,
            `default request value ${req!.text} is greater than default limit value ${dflt!.text}`,
          ),
        );
      if (gt(min, dflt))
        out.push(
          invalid(
            `${path}.default[${k}]`,
            dflt!.text,
            `min value ${min!.text} is greater than default value ${dflt!.text}`,
          ),
        );
      if (gt(dflt, max))
        out.push(
          invalid(
            `${path}.default[${k}]`,
            dflt!.text,
            `default value ${dflt!.text} is greater than max value ${max!.text}`,
          ),
        );
      const ratio = get('maxLimitRequestRatio', k);
      if (ratio?.q && ratio.q.num < ratio.q.den)
        out.push(
          invalid(`${path}.maxLimitRequestRatio[${k}]`, ratio.text, `ratio ${ratio.text} is less than 1`),
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
