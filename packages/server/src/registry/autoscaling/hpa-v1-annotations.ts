/**
 * What an autoscaling/v1 HorizontalPodAutoscaler carries in its `autoscaling.alpha.kubernetes.io/*`
 * annotations, as kubernetes `pkg/apis/autoscaling/v1/conversion.go` (1.32) writes and reads them:
 * - `metrics` and `current-metrics` hold autoscaling/v1's own alpha MetricSpec and MetricStatus
 *   (the v2beta1 shape: `targetAverageUtilization`, `metricName`, `currentAverageValue`…), in
 *   the Go structs' field order; quantities a Go struct holds by value are written even when
 *   zero (`"0"`);
 * - `conditions` holds the status conditions;
 * - `behavior` holds the *internal* HorizontalPodAutoscalerBehavior, marshalled without JSON
 *   tags: Go's field names (`ScaleUp`, `StabilizationWindowSeconds`…) and `null` for nil
 *   pointers; it is read back case-insensitively, as Go's decoder matches field names.
 */
import { isObj, type Obj, objs } from '../shared/util.js';

const ref = (o: unknown): Obj => {
  const r = isObj(o) ? o : {};
  return { kind: r.kind ?? '', name: r.name ?? '', ...(r.apiVersion ? { apiVersion: r.apiVersion } : {}) };
};
/** The fields of `o` that are set, in this order (Go's omitempty on pointers). */
const present = (entries: [string, unknown][]): Obj =>
  Object.fromEntries(entries.filter(([, v]) => v !== undefined && v !== null));
const metric = (m: unknown): Obj => (isObj(m) ? m : {});

/** One autoscaling/v2 MetricSpec as autoscaling/v1's alpha MetricSpec. */
function specToV1(m: Obj): Obj {
  const out: Obj = { type: m.type };
  if (isObj(m.object)) {
    const t = metric(m.object.target);
    out.object = present([
      ['target', ref(m.object.describedObject)],
      ['metricName', metric(m.object.metric).name ?? ''],
      ['targetValue', t.value ?? '0'],
      ['selector', metric(m.object.metric).selector],
      ['averageValue', t.averageValue],
    ]);
  }
  if (isObj(m.pods)) {
    out.pods = present([
      ['metricName', metric(m.pods.metric).name ?? ''],
      ['targetAverageValue', metric(m.pods.target).averageValue ?? '0'],
      ['selector', metric(m.pods.metric).selector],
    ]);
  }
  if (isObj(m.resource)) {
    const t = metric(m.resource.target);
    out.resource = present([
      ['name', m.resource.name ?? ''],
      ['targetAverageUtilization', t.averageUtilization],
      ['targetAverageValue', t.averageValue],
    ]);
  }
  if (isObj(m.containerResource)) {
    const t = metric(m.containerResource.target);
    out.containerResource = {
      ...present([
        ['name', m.containerResource.name ?? ''],
        ['targetAverageUtilization', t.averageUtilization],
        ['targetAverageValue', t.averageValue],
      ]),
      container: m.containerResource.container ?? '',
    };
  }
  if (isObj(m.external)) {
    const t = metric(m.external.target);
    out.external = present([
      ['metricName', metric(m.external.metric).name ?? ''],
      ['metricSelector', metric(m.external.metric).selector],
      ['targetValue', t.value],
      ['targetAverageValue', t.averageValue],
    ]);
  }
  return out;
}

/** One autoscaling/v2 MetricStatus as autoscaling/v1's alpha MetricStatus. */
function statusToV1(m: Obj): Obj {
  const out: Obj = { type: m.type };
  if (isObj(m.object)) {
    const c = metric(m.object.current);
    out.object = present([
      ['target', ref(m.object.describedObject)],
      ['metricName', metric(m.object.metric).name ?? ''],
      ['currentValue', c.value ?? '0'],
      ['selector', metric(m.object.metric).selector],
      ['averageValue', c.averageValue],
    ]);
  }
  if (isObj(m.pods)) {
    out.pods = present([
      ['metricName', metric(m.pods.metric).name ?? ''],
      ['currentAverageValue', metric(m.pods.current).averageValue ?? '0'],
      ['selector', metric(m.pods.metric).selector],
    ]);
  }
  if (isObj(m.resource)) {
    const c = metric(m.resource.current);
    out.resource = present([
      ['name', m.resource.name ?? ''],
      ['currentAverageUtilization', c.averageUtilization],
      ['currentAverageValue', c.averageValue ?? '0'],
    ]);
  }
  if (isObj(m.containerResource)) {
    const c = metric(m.containerResource.current);
    out.containerResource = {
      ...present([
        ['name', m.containerResource.name ?? ''],
        ['currentAverageUtilization', c.averageUtilization],
        ['currentAverageValue', c.averageValue ?? '0'],
      ]),
      container: m.containerResource.container ?? '',
    };
  }
  if (isObj(m.external)) {
    const c = metric(m.external.current);
    out.external = present([
      ['metricName', metric(m.external.metric).name ?? ''],
      ['metricSelector', metric(m.external.metric).selector],
      ['currentValue', c.value ?? '0'],
      ['currentAverageValue', c.averageValue],
    ]);
  }
  return out;
}

const metricId = (name: unknown, selector: unknown): Obj =>
  present([
    ['name', name ?? ''],
    ['selector', selector],
  ]);
const described = (o: unknown): Obj => {
  const r = isObj(o) ? o : {};
  return { kind: r.kind ?? '', name: r.name ?? '', ...(r.apiVersion ? { apiVersion: r.apiVersion } : {}) };
};

/** One autoscaling/v1 alpha MetricSpec as autoscaling/v2 (`Convert_v1_MetricSpec_To_autoscaling_MetricSpec`). */
function specFromV1(m: Obj): Obj {
  const out: Obj = { type: m.type };
  if (isObj(m.object)) {
    const o = m.object;
    out.object = {
      describedObject: described(o.target),
      target: present([
        ['type', o.averageValue === undefined || o.averageValue === null ? 'Value' : 'AverageValue'],
        ['value', o.targetValue ?? '0'],
        ['averageValue', o.averageValue],
      ]),
      metric: metricId(o.metricName, o.selector),
    };
  }
  if (isObj(m.pods)) {
    out.pods = {
      metric: metricId(m.pods.metricName, m.pods.selector),
      target: { type: 'AverageValue', averageValue: m.pods.targetAverageValue ?? '0' },
    };
  }
  for (const key of ['resource', 'containerResource'] as const) {
    const r = m[key];
    if (!isObj(r)) continue;
    const utilization = r.targetAverageUtilization;
    const average = r.targetAverageValue;
    const type =
      utilization !== undefined && utilization !== null
        ? 'Utilization'
        : average !== undefined && average !== null
          ? 'AverageValue'
          : undefined;
    out[key] = {
      name: r.name ?? '',
      target: present([
        ['type', type ?? ''],
        ['averageValue', average],
        ['averageUtilization', utilization],
      ]),
      ...(key === 'containerResource' && { container: r.container ?? '' }),
    };
  }
  if (isObj(m.external)) {
    const e = m.external;
    const hasValue = e.targetValue !== undefined && e.targetValue !== null;
    out.external = {
      metric: metricId(e.metricName, e.metricSelector),
      target: present([
        ['type', hasValue ? 'Value' : 'AverageValue'],
        ['value', e.targetValue],
        ['averageValue', e.targetAverageValue],
      ]),
    };
  }
  return out;
}

/** One autoscaling/v1 alpha MetricStatus as autoscaling/v2. */
function statusFromV1(m: Obj): Obj {
  const out: Obj = { type: m.type };
  if (isObj(m.object)) {
    const o = m.object;
    out.object = {
      metric: metricId(o.metricName, o.selector),
      current: present([
        ['value', o.currentValue ?? '0'],
        ['averageValue', o.averageValue],
      ]),
      describedObject: described(o.target),
    };
  }
  if (isObj(m.pods)) {
    out.pods = {
      metric: metricId(m.pods.metricName, m.pods.selector),
      current: { averageValue: m.pods.currentAverageValue ?? '0' },
    };
  }
  for (const key of ['resource', 'containerResource'] as const) {
    const r = m[key];
    if (!isObj(r)) continue;
    out[key] = {
      name: r.name ?? '',
      current: present([
        ['averageValue', r.currentAverageValue ?? '0'],
        ['averageUtilization', r.currentAverageUtilization],
      ]),
      ...(key === 'containerResource' && { container: r.container ?? '' }),
    };
  }
  if (isObj(m.external)) {
    const e = m.external;
    out.external = {
      metric: metricId(e.metricName, e.metricSelector),
      current: present([
        ['value', e.currentValue ?? '0'],
        ['averageValue', e.currentAverageValue],
      ]),
    };
  }
  return out;
}

/** The `metrics` annotation's value: v2 metric specs in v1's alpha shape. */
export const metricsToV1 = (metrics: Obj[]): string => JSON.stringify(metrics.map(specToV1));
/** The `current-metrics` annotation's value: v2 metric statuses in v1's alpha shape. */
export const currentMetricsToV1 = (metrics: Obj[]): string => JSON.stringify(metrics.map(statusToV1));
/** The `conditions` annotation's value. */
export const conditionsToV1 = (conditions: Obj[]): string =>
  JSON.stringify(
    conditions.map((c) => ({
      type: c.type ?? '',
      status: c.status ?? '',
      // metav1.Time marshals its zero value as null.
      lastTransitionTime: c.lastTransitionTime ?? null,
      ...(c.reason ? { reason: c.reason } : {}),
      ...(c.message ? { message: c.message } : {}),
    })),
  );

/** The `metrics` annotation read back as v2 metric specs; undefined when it does not decode. */
export function metricsFromV1(text: string): Obj[] | undefined {
  const list = decodeList(text);
  return list?.map(specFromV1);
}

/** The `current-metrics` annotation read back as v2 metric statuses. */
export function currentMetricsFromV1(text: string): Obj[] | undefined {
  return decodeList(text)?.map(statusFromV1);
}

/** The `conditions` annotation read back. */
export function conditionsFromV1(text: string): Obj[] | undefined {
  return decodeList(text)?.map((c) =>
    present([
      ['type', c.type ?? ''],
      ['status', c.status ?? ''],
      ['lastTransitionTime', c.lastTransitionTime ?? undefined],
      ['reason', c.reason || undefined],
      ['message', c.message || undefined],
    ]),
  );
}

function decodeList(text: string): Obj[] | undefined {
  try {
    const v = JSON.parse(text);
    if (v === null) return [];
    return Array.isArray(v) ? objs(v) : undefined;
  } catch {
    return undefined;
  }
}

/** A v2 behavior as the internal type marshals it: Go field names, `null` for nil pointers. */
export function behaviorToV1(behavior: Obj): string {
  const rules = (r: unknown) => {
    if (!isObj(r)) return null;
    return {
      StabilizationWindowSeconds: r.stabilizationWindowSeconds ?? null,
      SelectPolicy: r.selectPolicy ?? null,
      Policies: Array.isArray(r.policies)
        ? objs(r.policies).map((p) => ({
            Type: p.type ?? '',
            Value: p.value ?? 0,
            PeriodSeconds: p.periodSeconds ?? 0,
          }))
        : null,
    };
  };
  return JSON.stringify({ ScaleUp: rules(behavior.scaleUp), ScaleDown: rules(behavior.scaleDown) });
}

/** The field of `o` whose name matches `name` case-insensitively, as Go's decoder finds it. */
function field(o: Obj, name: string): unknown {
  if (Object.hasOwn(o, name)) return o[name];
  const lower = name.toLowerCase();
  const key = Object.keys(o).find((k) => k.toLowerCase() === lower);
  return key === undefined ? undefined : o[key];
}

/** The `behavior` annotation read back as a v2 behavior; undefined when empty or undecodable. */
export function behaviorFromV1(text: string): Obj | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObj(v)) return undefined;
  const rules = (r: unknown): Obj | undefined => {
    if (!isObj(r)) return undefined;
    const policies = field(r, 'Policies');
    return present([
      ['stabilizationWindowSeconds', field(r, 'StabilizationWindowSeconds')],
      ['selectPolicy', field(r, 'SelectPolicy')],
      [
        'policies',
        Array.isArray(policies)
          ? objs(policies).map((p) => ({
              type: field(p, 'Type') ?? '',
              value: field(p, 'Value') ?? 0,
              periodSeconds: field(p, 'PeriodSeconds') ?? 0,
            }))
          : undefined,
      ],
    ]);
  };
  const out = present([
    ['scaleUp', rules(field(v, 'ScaleUp'))],
    ['scaleDown', rules(field(v, 'ScaleDown'))],
  ]);
  return Object.keys(out).length === 0 ? undefined : out;
}
