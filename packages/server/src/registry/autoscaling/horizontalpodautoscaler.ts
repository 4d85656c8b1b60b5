/**
 * autoscaling HorizontalPodAutoscalers: v2 (stored, preferred) and v1 (converted on the way in
 * and out): defaults, validation and printer (`pkg/apis/autoscaling`, printers.go).
 */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, fieldDoc, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { defineKind } from '../shared/define.js';
import {
  clone,
  def,
  dig,
  ensureObj,
  forbidden,
  invalid,
  isObj,
  isSet,
  isValidPathSegmentName,
  notSupported,
  numOr,
  type Obj,
  objs,
  parseQuantity,
  required,
  since,
  str,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import {
  behaviorFromV1,
  behaviorToV1,
  conditionsFromV1,
  conditionsToV1,
  currentMetricsFromV1,
  currentMetricsToV1,
  metricsFromV1,
  metricsToV1,
} from './hpa-v1-annotations.js';

const V2 = 'io.k8s.api.autoscaling.v2';
const DEFAULT_CPU_UTILIZATION = 80;
const METRICS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/metrics';
const CURRENT_METRICS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/current-metrics';
const CONDITIONS_ANNOTATION = 'autoscaling.alpha.kubernetes.io/conditions';
const BEHAVIOR_ANNOTATION = 'autoscaling.alpha.kubernetes.io/behavior';

/** `GenerateHPAScaleUpRules` / `GenerateHPAScaleDownRules`: the unset parts of a rule from its defaults. */
function scalingRules(rules: unknown, up: boolean): Obj {
  const from = isObj(rules) ? rules : {};
  const out: Obj = up
    ? {
        stabilizationWindowSeconds: 0,
        selectPolicy: 'Max',
        policies: [
          { type: 'Pods', value: 4, periodSeconds: 15 },
          { type: 'Percent', value: 100, periodSeconds: 15 },
        ],
      }
    : { selectPolicy: 'Max', policies: [{ type: 'Percent', value: 100, periodSeconds: 15 }] };
  if (isSet(from.selectPolicy)) out.selectPolicy = from.selectPolicy;
  if (isSet(from.stabilizationWindowSeconds))
    out.stabilizationWindowSeconds = from.stabilizationWindowSeconds;
  if (isSet(from.policies)) out.policies = from.policies;
  return out;
}

/** `SetDefaults_HorizontalPodAutoscaler` of autoscaling/v2. */
export function defaultHpaV2(obj: Obj): void {
  const spec = ensureObj(obj, 'spec');
  if (numOr(spec.minReplicas) === undefined) spec.minReplicas = 1;
  if (!Array.isArray(spec.metrics) || spec.metrics.length === 0) {
    spec.metrics = [
      {
        type: 'Resource',
        resource: {
          name: 'cpu',
          target: { type: 'Utilization', averageUtilization: DEFAULT_CPU_UTILIZATION },
        },
      },
    ];
  }
  if (isObj(spec.behavior)) {
    spec.behavior.scaleUp = scalingRules(spec.behavior.scaleUp, true);
    spec.behavior.scaleDown = scalingRules(spec.behavior.scaleDown, false);
  }
}

/** `ValidateCrossVersionObjectReference`. */
function validateTargetRef(ref: unknown, path: string): StatusCause[] {
  const r = isObj(ref) ? ref : {};
  const out: StatusCause[] = [];
  for (const f of ['kind', 'name']) {
    const v = str(r[f]);
    if (!v) out.push(required(`${path}.${f}`));
    else for (const m of isValidPathSegmentName(v)) out.push(invalid(`${path}.${f}`, v, m));
  }
  return out;
}

/** `validateHorizontalPodAutoscalerSpec`'s replica bounds, shared by both versions. */
function validateReplicas(spec: Obj): StatusCause[] {
  const out: StatusCause[] = [];
  const min = numOr(spec.minReplicas);
  const max = numOr(spec.maxReplicas) ?? 0;
  // minReplicas 0 is the HPAScaleToZero alpha feature, off by default.
  if (min !== undefined && min < 1)
    out.push(invalid('spec.minReplicas', min, 'must be greater than or equal to 1'));
  if (max < 1) out.push(invalid('spec.maxReplicas', max, 'must be greater than 0'));
  if (min !== undefined && max < min)
    out.push(invalid('spec.maxReplicas', max, 'must be greater than or equal to `minReplicas`'));
  return out;
}

const SCALE_TO_ZERO =
  'must specify at least one Object or External metric to support scaling to zero replicas';

const METRIC_TYPES = ['Object', 'Pods', 'Resource', 'ContainerResource', 'External'];
const METRIC_FIELD: Record<string, string> = {
  Object: 'object',
  Pods: 'pods',
  Resource: 'resource',
  ContainerResource: 'containerResource',
  External: 'external',
};
const TARGET_TYPES = ['Utilization', 'Value', 'AverageValue'];

/** `validateMetricTarget`. */
function validateTarget(target: unknown, path: string): StatusCause[] {
  const t = isObj(target) ? target : {};
  const out: StatusCause[] = [];
  const type = str(t.type);
  if (!type) out.push(required(`${path}.type`, 'must specify a metric target type'));
  else if (!TARGET_TYPES.includes(type)) out.push(notSupported(`${path}.type`, type, TARGET_TYPES));
  const util = numOr(t.averageUtilization);
  if (util !== undefined && util < 1)
    out.push(invalid(`${path}.averageUtilization`, util, 'must be greater than 0'));
  for (const f of ['value', 'averageValue']) {
    const q = isSet(t[f]) ? parseQuantity(t[f]) : undefined;
    if (q && q.num <= 0n) out.push(invalid(`${path}.${f}`, str(t[f]) || String(t[f]), 'must be positive'));
  }
  return out;
}

/** What each source's target must hold (`validateResourceSource`, `validatePodsSource`, …). */
function targetCompleteness(type: string, target: unknown, path: string): StatusCause[] {
  const t = isObj(target) ? target : {};
  const [util, avg, value] = [isSet(t.averageUtilization), isSet(t.averageValue), isSet(t.value)];
  switch (type) {
    case 'Resource':
    case 'ContainerResource':
      if (!util && !avg)
        return [
          required(
            `${path}.averageUtilization`,
            'must set either a target raw value or a target utilization',
          ),
        ];
      if (util && avg)
        return [
          forbidden(`${path}.averageValue`, 'may not set both a target raw value and a target utilization'),
        ];
      return [];
    case 'Pods':
      return avg ? [] : [required(`${path}.averageValue`, 'must specify a positive target averageValue')];
    case 'Object':
      return value || avg
        ? []
        : [required(`${path}.averageValue`, 'must set either a target value or averageValue')];
    default: // External
      if (!value && !avg)
        return [
          required(`${path}.averageValue`, 'must set either a target value for metric or a per-pod target'),
        ];
      if (value && avg)
        return [
          forbidden(`${path}.value`, 'may not set both a target value for metric and a per-pod target'),
        ];
      return [];
  }
}

/**
 * `validateMetrics` (the parts a user meets: types, their source, resource names, targets), and
 * its rule that scaling to zero needs an Object or External metric.
 */
function validateMetrics(metrics: unknown, minReplicas: unknown): StatusCause[] {
  const out: StatusCause[] = [];
  const list = objs(metrics);
  list.forEach((m, i) => {
    const path = `spec.metrics[${i}]`;
    const type = str(m.type);
    const present = Object.entries(METRIC_FIELD).filter(([, f]) => isSet(m[f]));
    if (!type) {
      out.push(required(`${path}.type`, 'must specify a metric source type'));
      return;
    }
    if (!METRIC_TYPES.includes(type)) {
      out.push(notSupported(`${path}.type`, type, METRIC_TYPES));
      return;
    }
    const field = METRIC_FIELD[type]!;
    if (present.length > 1 || (present.length === 1 && present[0]![0] !== type)) {
      out.push(
        invalid(
          `${path}.${present.find(([t]) => t !== type)?.[1]}`,
          '<object>',
          'must populate the given metric source only',
        ),
      );
    }
    const source = m[field];
    if (!isObj(source)) {
      out.push(required(`${path}.${field}`, `must populate information for the given metric source`));
      return;
    }
    if ((type === 'Resource' || type === 'ContainerResource') && !str(source.name))
      out.push(required(`${path}.${field}.name`, 'must specify a resource name'));
    if (type === 'ContainerResource' && !str(source.container))
      out.push(required(`${path}.${field}.container`, 'must specify a container'));
    if (type === 'Object')
      out.push(...validateTargetRef(source.describedObject, `${path}.object.describedObject`));
    if ((type === 'Pods' || type === 'Object' || type === 'External') && !str(dig(source, 'metric', 'name')))
      out.push(required(`${path}.${field}.metric.name`, 'must specify a metric name'));
    out.push(...validateTarget(source.target, `${path}.${field}.target`));
    out.push(...targetCompleteness(type, source.target, `${path}.${field}.target`));
  });
  if (numOr(minReplicas) === 0 && !list.some((m) => m.type === 'Object' || m.type === 'External'))
    out.push(forbidden('spec.metrics', SCALE_TO_ZERO));
  return out;
}

/** `validateBehavior`'s rule checks. */
function validateBehavior(behavior: unknown): StatusCause[] {
  if (!isObj(behavior)) return [];
  const out: StatusCause[] = [];
  for (const dir of ['scaleUp', 'scaleDown']) {
    const rules = behavior[dir];
    if (!isObj(rules)) continue;
    const path = `spec.behavior.${dir}`;
    const window = numOr(rules.stabilizationWindowSeconds);
    if (window !== undefined && window < 0)
      out.push(
        invalid(`${path}.stabilizationWindowSeconds`, window, 'must be greater than or equal to zero'),
      );
    if (window !== undefined && window > 3600)
      out.push(invalid(`${path}.stabilizationWindowSeconds`, window, 'must be less than or equal to 3600'));
    const select = str(rules.selectPolicy);
    if (select && !['Max', 'Min', 'Disabled'].includes(select))
      out.push(notSupported(`${path}.selectPolicy`, select, ['Disabled', 'Max', 'Min']));
    const policies = objs(rules.policies);
    if (policies.length === 0 && select !== 'Disabled')
      out.push(required(`${path}.policies`, 'must specify at least one Policy'));
    policies.forEach((p, i) => {
      const pp = `${path}.policies[${i}]`;
      const type = str(p.type);
      if (type !== 'Pods' && type !== 'Percent')
        out.push(notSupported(`${pp}.type`, type, ['Percent', 'Pods']));
      const value = numOr(p.value) ?? 0;
      if (value <= 0) out.push(invalid(`${pp}.value`, value, 'must be greater than zero'));
      const period = numOr(p.periodSeconds) ?? 0;
      if (period <= 0) out.push(invalid(`${pp}.periodSeconds`, period, 'must be greater than zero'));
      if (period > 1800)
        out.push(invalid(`${pp}.periodSeconds`, period, 'must be less than or equal to 1800'));
    });
  }
  return out;
}

/** printers.go `formatHPAMetrics`: `cpu: 40%/80%`, at most two, then `+ N more...`. */
export function formatHpaMetrics(specs: unknown, statuses: unknown): string {
  const list: string[] = [];
  const current = objs(statuses);
  const specList = objs(specs);
  if (specList.length === 0) return '<none>';
  specList.forEach((spec, i) => {
    const status = current[i];
    const quantity = (v: unknown) => (isSet(v) ? String(v) : '<unknown>');
    switch (spec.type) {
      case 'External':
      case 'Object': {
        const field = spec.type === 'External' ? 'external' : 'object';
        const target = isObj(dig(spec, field, 'target')) ? (dig(spec, field, 'target') as Obj) : {};
        if (isSet(target.averageValue)) {
          list.push(
            `${quantity(dig(status, field, 'current', 'averageValue'))}/${String(target.averageValue)} (avg)`,
          );
        } else {
          list.push(`${quantity(dig(status, field, 'current', 'value'))}/${String(target.value ?? '<nil>')}`);
        }
        break;
      }
      case 'Pods':
        list.push(
          `${quantity(dig(status, 'pods', 'current', 'averageValue'))}/${String(dig(spec, 'pods', 'target', 'averageValue') ?? '')}`,
        );
        break;
      case 'Resource':
      case 'ContainerResource': {
        const field = spec.type === 'Resource' ? 'resource' : 'containerResource';
        const name = str(dig(spec, field, 'name'));
        const target = isObj(dig(spec, field, 'target')) ? (dig(spec, field, 'target') as Obj) : {};
        if (isSet(target.averageValue)) {
          list.push(
            `${name}: ${quantity(dig(status, field, 'current', 'averageValue'))}/${String(target.averageValue)}`,
          );
        } else {
          const cur = numOr(dig(status, field, 'current', 'averageUtilization'));
          const util = numOr(target.averageUtilization);
          list.push(
            `${name}: ${cur === undefined ? '<unknown>' : `${cur}%`}/${util === undefined ? '<auto>' : `${util}%`}`,
          );
        }
        break;
      }
      default:
        list.push('<unknown type>');
    }
  });
  if (list.length > 2) return `${list.slice(0, 2).join(', ')} + ${list.length - 2} more...`;
  return list.join(', ');
}

const hpaColumns = [
  nameColumn(),
  col('Reference', 'string', fieldDoc(`${V2}.HorizontalPodAutoscalerSpec`, 'scaleTargetRef')),
  col('Targets', 'string', fieldDoc(`${V2}.HorizontalPodAutoscalerSpec`, 'metrics')),
  col('MinPods', 'string', fieldDoc(`${V2}.HorizontalPodAutoscalerSpec`, 'minReplicas')),
  col('MaxPods', 'integer', fieldDoc(`${V2}.HorizontalPodAutoscalerSpec`, 'maxReplicas')),
  col('Replicas', 'integer', fieldDoc(`${V2}.HorizontalPodAutoscalerStatus`, 'currentReplicas')),
  ageColumn(),
];

/** printers.go `printHorizontalPodAutoscaler`, of a v2 object. */
function hpaRow(obj: Obj, now: Date): unknown[] {
  const spec = isObj(obj.spec) ? obj.spec : {};
  const ref = isObj(spec.scaleTargetRef) ? spec.scaleTargetRef : {};
  const min = numOr(spec.minReplicas);
  return [
    str(dig(obj, 'metadata', 'name')),
    `${str(ref.kind)}/${str(ref.name)}`,
    formatHpaMetrics(spec.metrics, dig(obj, 'status', 'currentMetrics')),
    min === undefined ? '<unset>' : String(min),
    numOr(spec.maxReplicas) ?? 0,
    numOr(dig(obj, 'status', 'currentReplicas')) ?? 0,
    since(dig(obj, 'metadata', 'creationTimestamp'), now),
  ];
}

const horizontalpodautoscalers: KindBehaviour = {
  defaults(obj) {
    defaultHpaV2(obj);
    // v2's status: desiredReplicas and currentMetrics have no omitempty.
    const status = ensureObj(obj, 'status');
    def(status, 'desiredReplicas', 0);
    if (!('currentMetrics' in status)) status.currentMetrics = null;
  },
  validate(obj) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    // validateHorizontalPodAutoscalerSpec's order: replicas, target, metrics, behavior.
    return [
      ...validateReplicas(spec),
      ...validateTargetRef(spec.scaleTargetRef, 'spec.scaleTargetRef'),
      ...validateMetrics(spec.metrics, spec.minReplicas),
      ...validateBehavior(spec.behavior),
    ];
  },
  columns: hpaColumns,
  row: hpaRow,
};

// ---------------------------------------------------------------------------------------------
// autoscaling/v1: CPU utilization only; everything else rides in annotations (as conversion.go
// keeps it), so a v2 object survives a v1 round trip.

const ROUND_TRIP_ANNOTATIONS = [
  METRICS_ANNOTATION,
  CURRENT_METRICS_ANNOTATION,
  CONDITIONS_ANNOTATION,
  BEHAVIOR_ANNOTATION,
];

const isCpu = (m: Obj): boolean => m.type === 'Resource' && dig(m, 'resource', 'name') === 'cpu';

/**
 * An autoscaling/v1 HPA in its stored autoscaling/v2 form (a new object), as
 * `Convert_v1_HorizontalPodAutoscaler_To_autoscaling_HorizontalPodAutoscaler` makes it: the
 * annotations' metrics first, then the one of targetCPUUtilizationPercentage; an annotation that
 * does not decode is ignored; without any metric, CPU at 80 %.
 */
export function hpaV1ToV2(v1: Obj): Obj {
  const out = clone(v1);
  out.apiVersion = 'autoscaling/v2';
  const meta = ensureObj(out, 'metadata');
  const annotations = isObj(meta.annotations) ? { ...meta.annotations } : {};
  const spec = isObj(out.spec) ? out.spec : {};
  const status = isObj(out.status) ? out.status : undefined;
  const text = (key: string): string | undefined =>
    typeof annotations[key] === 'string' ? (annotations[key] as string) : undefined;
  const cpu = numOr(spec.targetCPUUtilizationPercentage);
  let metrics: Obj[] =
    cpu !== undefined
      ? [
          {
            type: 'Resource',
            resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: cpu } },
          },
        ]
      : [];
  const other = text(METRICS_ANNOTATION) === undefined ? undefined : metricsFromV1(text(METRICS_ANNOTATION)!);
  if (other) metrics = [...other, ...metrics];
  if (metrics.length === 0)
    metrics = [
      {
        type: 'Resource',
        resource: {
          name: 'cpu',
          target: { type: 'Utilization', averageUtilization: DEFAULT_CPU_UTILIZATION },
        },
      },
    ];
  const behavior =
    text(BEHAVIOR_ANNOTATION) === undefined ? undefined : behaviorFromV1(text(BEHAVIOR_ANNOTATION)!);
  out.spec = {
    scaleTargetRef: spec.scaleTargetRef,
    ...(isSet(spec.minReplicas) && { minReplicas: spec.minReplicas }),
    maxReplicas: spec.maxReplicas,
    metrics,
    ...(behavior && { behavior }),
  };
  if (status) {
    const currentCpu = numOr(status.currentCPUUtilizationPercentage);
    let current: Obj[] =
      currentCpu !== undefined
        ? [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: currentCpu } } }]
        : [];
    // The annotation's statuses replace those: they have more information.
    const annotated =
      text(CURRENT_METRICS_ANNOTATION) === undefined
        ? undefined
        : currentMetricsFromV1(text(CURRENT_METRICS_ANNOTATION)!);
    if (annotated) current = annotated;
    const conditions =
      text(CONDITIONS_ANNOTATION) === undefined ? undefined : conditionsFromV1(text(CONDITIONS_ANNOTATION)!);
    out.status = {
      ...(isSet(status.observedGeneration) && { observedGeneration: status.observedGeneration }),
      ...(isSet(status.lastScaleTime) && { lastScaleTime: status.lastScaleTime }),
      currentReplicas: status.currentReplicas ?? 0,
      desiredReplicas: status.desiredReplicas ?? 0,
      ...(current.length > 0 && { currentMetrics: current }),
      ...(conditions && conditions.length > 0 && { conditions }),
    };
  }
  for (const k of ROUND_TRIP_ANNOTATIONS) delete annotations[k];
  if (Object.keys(annotations).length > 0) meta.annotations = annotations;
  else delete meta.annotations;
  defaultHpaV2(out);
  return out;
}

/**
 * A stored autoscaling/v2 HPA as autoscaling/v1 (a new object), as
 * `Convert_autoscaling_HorizontalPodAutoscaler_To_v1_HorizontalPodAutoscaler` makes it: CPU
 * utilization as targetCPUUtilizationPercentage, every other metric, every current metric (the
 * CPU one too), the conditions and the behavior in the alpha annotations, in v1's formats.
 */
export function hpaV2ToV1(v2: Obj): Obj {
  const out = clone(v2);
  out.apiVersion = 'autoscaling/v1';
  const meta = ensureObj(out, 'metadata');
  const annotations: Obj = isObj(meta.annotations) ? { ...meta.annotations } : {};
  // Only the annotations this conversion writes survive it.
  for (const k of ROUND_TRIP_ANNOTATIONS) delete annotations[k];
  const spec = isObj(out.spec) ? out.spec : {};
  const metrics = objs(spec.metrics);
  const cpu = metrics.find(isCpu);
  const others = metrics.filter(
    (m) => !(isCpu(m) && dig(m, 'resource', 'target', 'averageUtilization') != null),
  );
  if (others.length > 0) annotations[METRICS_ANNOTATION] = metricsToV1(others);
  const status = isObj(out.status) ? out.status : {};
  const current = objs(status.currentMetrics);
  if (current.length > 0) annotations[CURRENT_METRICS_ANNOTATION] = currentMetricsToV1(current);
  if (isObj(spec.behavior)) annotations[BEHAVIOR_ANNOTATION] = behaviorToV1(spec.behavior);
  if (Array.isArray(status.conditions) && status.conditions.length > 0)
    annotations[CONDITIONS_ANNOTATION] = conditionsToV1(objs(status.conditions));
  const targetCpu = numOr(dig(cpu, 'resource', 'target', 'averageUtilization'));
  out.spec = {
    scaleTargetRef: spec.scaleTargetRef,
    ...(isSet(spec.minReplicas) && { minReplicas: spec.minReplicas }),
    maxReplicas: spec.maxReplicas,
    ...(targetCpu !== undefined && { targetCPUUtilizationPercentage: targetCpu }),
  };
  // The last CPU status with a utilization wins, as the conversion's loop leaves it.
  let cpuNow: number | undefined;
  for (const m of current)
    if (isCpu(m)) cpuNow = numOr(dig(m, 'resource', 'current', 'averageUtilization')) ?? cpuNow;
  out.status = {
    ...(isSet(status.observedGeneration) && { observedGeneration: status.observedGeneration }),
    ...(isSet(status.lastScaleTime) && { lastScaleTime: status.lastScaleTime }),
    currentReplicas: status.currentReplicas ?? 0,
    desiredReplicas: status.desiredReplicas ?? 0,
    ...(cpuNow !== undefined && { currentCPUUtilizationPercentage: cpuNow }),
  };
  if (Object.keys(annotations).length > 0) meta.annotations = annotations;
  else delete meta.annotations;
  return out;
}

/** autoscaling/v1: `SetDefaults_HorizontalPodAutoscaler` (minReplicas 1), its validation and the same printer. */
export const hpaV1Behaviour: KindBehaviour = {
  defaults(obj) {
    const spec = ensureObj(obj, 'spec');
    if (numOr(spec.minReplicas) === undefined) spec.minReplicas = 1;
  },
  validate(obj) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const out = [...validateReplicas(spec), ...validateTargetRef(spec.scaleTargetRef, 'spec.scaleTargetRef')];
    // Validated as kube validates it, converted: the CPU target is metrics[0], never a metric
    // that can scale to zero.
    const cpu = numOr(spec.targetCPUUtilizationPercentage);
    if (cpu !== undefined && cpu < 1)
      out.push(invalid('spec.metrics[0].resource.target.averageUtilization', cpu, 'must be greater than 0'));
    if (numOr(spec.minReplicas) === 0) out.push(forbidden('spec.metrics', SCALE_TO_ZERO));
    return out;
  },
  columns: hpaColumns,
  row: (obj, now) => hpaRow(hpaV1ToV2(obj), now),
};

/** `HorizontalPodAutoscaler` (autoscaling/v2 `horizontalpodautoscalers`): how the registry serves, validates and prints it. */
// autoscaling/v2 first: the preferred version, and the one HPAs are stored at.
export const horizontalPodAutoscalerKind: ResourceType = defineKind({
  behaviour: horizontalpodautoscalers,
  group: 'autoscaling',
  version: 'v2',
  defPackage: 'io.k8s.api.autoscaling.v2',
  resource: 'horizontalpodautoscalers',
  kind: 'HorizontalPodAutoscaler',
  shortNames: ['hpa'],
  categories: ['all'],
  // The autoscaler strategy sets no generation (metadata.generation stays unset).
  generation: false,
  subresources: { status: true },
});

/** `HorizontalPodAutoscaler` (autoscaling/v1 `horizontalpodautoscalers`): how the registry serves, validates and prints it. */
export const horizontalPodAutoscalerV1Kind: ResourceType = defineKind({
  group: 'autoscaling',
  version: 'v1',
  defPackage: 'io.k8s.api.autoscaling.v1',
  resource: 'horizontalpodautoscalers',
  kind: 'HorizontalPodAutoscaler',
  shortNames: ['hpa'],
  categories: ['all'],
  // The autoscaler strategy sets no generation (metadata.generation stays unset).
  generation: false,
  subresources: { status: true },
  behaviour: hpaV1Behaviour,
  storedAs: {
    group: 'autoscaling',
    resource: 'horizontalpodautoscalers',
    toStored: hpaV1ToV2,
    fromStored: hpaV2ToV1,
  },
});
