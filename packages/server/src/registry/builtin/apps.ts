/** apps/v1 kinds: deployments, replicasets, statefulsets and daemonsets. */
import { ApiError, type StatusCause } from 'kubeloop/api';
import { deepEqual } from '../../util/object.js';
import { defaultClaimSpec } from './core.js';
import { docs } from './descriptions.js';
import { defaultPodTemplate, validatePodTemplate } from './podspec.js';
import { ageColumn, CONTAINERS_DOC, col, IMAGES_DOC, type KindBehaviour, nameColumn } from './types.js';
import {
  def,
  dig,
  ensureObj,
  forbidden,
  formatLabelSelector,
  formatLabels,
  GoValue,
  goIntOrString,
  goLabelSelector,
  goStringMap,
  int,
  invalid,
  isObj,
  labelSelectorAsSelector,
  nonNegative,
  notSupported,
  numOr,
  type Obj,
  objs,
  required,
  selectorEmpty,
  selectorMatches,
  selectorString,
  semanticEqual,
  since,
  str,
  strMap,
  validateLabelSelector,
  validateLabels,
} from './util.js';

/**
 * The status checks Deployments and ReplicaSets share: counters are non-negative, the partial
 * counts never exceed `status.replicas`, and available never exceeds ready.
 */
function replicaStatusCauses(status: Obj, counters: string[], boundedByReplicas: string[]): StatusCause[] {
  const out = statusNonNegative(status, counters);
  const msg = 'cannot be greater than status.replicas';
  for (const f of boundedByReplicas) {
    if (int(status[f]) > int(status.replicas)) out.push(invalid(`status.${f}`, int(status[f]), msg));
  }
  if (int(status.availableReplicas) > int(status.readyReplicas)) {
    out.push(
      invalid(
        'status.availableReplicas',
        int(status.availableReplicas),
        'cannot be greater than readyReplicas',
      ),
    );
  }
  return out;
}

const specOf = (obj: Obj): Obj => (isObj(obj.spec) ? obj.spec : {});
const statusOf = (obj: Obj): Obj => (isObj(obj.status) ? obj.status : {});
const nameOf = (obj: Obj): string => str(dig(obj, 'metadata', 'name'));
const age = (obj: Obj, now: Date): string => since(dig(obj, 'metadata', 'creationTimestamp'), now);

/** printers.go `layoutContainerCells`: container names and images, comma separated. */
export function containerCells(template: unknown): [string, string] {
  const containers = objs(dig(template, 'spec', 'containers'));
  return [containers.map((c) => str(c.name)).join(','), containers.map((c) => str(c.image)).join(',')];
}

const selectorValue = (v: unknown): GoValue => new GoValue(goLabelSelector(v));

/** The selector checks shared by Deployment, ReplicaSet and StatefulSet specs. */
function validateSelector(
  spec: Obj,
  what: string,
  invalidDetail: string,
): { causes: StatusCause[]; ok: boolean } {
  const causes: StatusCause[] = [];
  const sel = spec.selector;
  if (sel === undefined || sel === null) causes.push(required('spec.selector'));
  else {
    causes.push(...validateLabelSelector(sel, 'spec.selector'));
    if (isObj(sel) && Object.keys(strMap(sel.matchLabels)).length + objs(sel.matchExpressions).length === 0) {
      causes.push(invalid('spec.selector', selectorValue(sel), `empty selector is invalid for ${what}`));
    }
  }
  const parsed = labelSelectorAsSelector(sel);
  if (!parsed) {
    causes.push(invalid('spec.selector', selectorValue(sel), invalidDetail));
    return { causes, ok: false };
  }
  return { causes, ok: true };
}

/** The template labels must satisfy a non-empty selector. */
function templateMatches(spec: Obj): StatusCause[] {
  const parsed = labelSelectorAsSelector(spec.selector);
  if (!parsed || selectorEmpty(parsed)) return [];
  const labels = dig(spec, 'template', 'metadata', 'labels');
  if (selectorMatches(parsed, strMap(labels))) return [];
  return [
    invalid(
      'spec.template.metadata.labels',
      new GoValue(goStringMap(labels)),
      '`selector` does not match template `labels`',
    ),
  ];
}

/** `ValidatePodTemplateSpecForReplicaSet` (Deployments and ReplicaSets). */
function validateReplicaSetTemplate(spec: Obj): StatusCause[] {
  const out = templateMatches(spec);
  out.push(...validatePodTemplate(spec.template, 'spec.template'));
  const restart = str(dig(spec, 'template', 'spec', 'restartPolicy'));
  if (restart !== 'Always') out.push(notSupported('spec.template.spec.restartPolicy', restart, ['Always']));
  const ads = numOr(dig(spec, 'template', 'spec', 'activeDeadlineSeconds'));
  if (ads !== undefined) {
    out.push(
      invalid(
        'spec.template.spec.activeDeadlineSeconds',
        ads,
        'activeDeadlineSeconds in ReplicaSet is not Supported',
      ),
    );
  }
  return out;
}

const PERCENT = /^[0-9]+%$/;

/** `ValidatePositiveIntOrPercent`. */
export function validateIntOrPercent(v: unknown, field: string): StatusCause[] {
  if (typeof v === 'string') {
    return PERCENT.test(v)
      ? []
      : [
          invalid(
            field,
            new GoValue(goIntOrString(v)),
            "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
          ),
        ];
  }
  return nonNegative(field, v);
}

/** `getIntOrPercentValue`. */
const intOrPercentValue = (v: unknown): number =>
  typeof v === 'string' ? (PERCENT.test(v) ? Number.parseInt(v, 10) : 0) : int(v);

/** `IsNotMoreThan100Percent`. */
export function notMoreThan100(v: unknown, field: string): StatusCause[] {
  if (typeof v === 'string' && PERCENT.test(v) && Number.parseInt(v, 10) > 100) {
    return [invalid(field, new GoValue(goIntOrString(v)), 'must not be greater than 100%')];
  }
  return [];
}

function immutableSelector(obj: Obj, old: Obj | undefined): StatusCause[] {
  if (!old) return [];
  const next = specOf(obj).selector;
  const prev = specOf(old).selector;
  return semanticEqual(next, prev)
    ? []
    : [invalid('spec.selector', selectorValue(next), 'field is immutable')];
}

function statusNonNegative(status: Obj, fields: string[]): StatusCause[] {
  return fields.flatMap((f) => nonNegative(`status.${f}`, status[f]));
}

// ---------------------------------------------------------------------------------------------
// Deployments

const deployments: KindBehaviour = {
  defaults(obj) {
    const spec = ensureObj(obj, 'spec');
    if (numOr(spec.replicas) === undefined) spec.replicas = 1;
    const strategy = ensureObj(spec, 'strategy');
    def(strategy, 'type', 'RollingUpdate');
    if (strategy.type === 'RollingUpdate') {
      const ru = ensureObj(strategy, 'rollingUpdate');
      if (ru.maxUnavailable === undefined || ru.maxUnavailable === null) ru.maxUnavailable = '25%';
      if (ru.maxSurge === undefined || ru.maxSurge === null) ru.maxSurge = '25%';
    }
    if (numOr(spec.revisionHistoryLimit) === undefined) spec.revisionHistoryLimit = 10;
    if (numOr(spec.progressDeadlineSeconds) === undefined) spec.progressDeadlineSeconds = 600;
    defaultPodTemplate(ensureObj(spec, 'template'));
    ensureObj(obj, 'status');
  },
  validate(obj, old) {
    const spec = specOf(obj);
    const out = nonNegative('spec.replicas', spec.replicas);
    const sel = validateSelector(spec, 'deployment', 'invalid label selector');
    out.push(...sel.causes);
    if (sel.ok) out.push(...validateReplicaSetTemplate(spec));
    const strategy = isObj(spec.strategy) ? spec.strategy : {};
    switch (strategy.type) {
      case 'Recreate':
        if (strategy.rollingUpdate !== undefined && strategy.rollingUpdate !== null) {
          out.push(
            forbidden(
              'spec.strategy.rollingUpdate',
              "may not be specified when strategy `type` is 'Recreate'",
            ),
          );
        }
        break;
      case 'RollingUpdate': {
        const ru = strategy.rollingUpdate;
        if (!isObj(ru)) {
          out.push(required('spec.strategy.rollingUpdate', 'this should be defaulted and never be nil'));
          break;
        }
        const p = 'spec.strategy.rollingUpdate';
        out.push(...validateIntOrPercent(ru.maxUnavailable, `${p}.maxUnavailable`));
        out.push(...validateIntOrPercent(ru.maxSurge, `${p}.maxSurge`));
        if (intOrPercentValue(ru.maxUnavailable) === 0 && intOrPercentValue(ru.maxSurge) === 0) {
          out.push(
            invalid(
              `${p}.maxUnavailable`,
              new GoValue(goIntOrString(ru.maxUnavailable)),
              'may not be 0 when `maxSurge` is 0',
            ),
          );
        }
        out.push(...notMoreThan100(ru.maxUnavailable, `${p}.maxUnavailable`));
        break;
      }
      default:
        out.push(
          notSupported(
            'spec.strategy',
            new GoValue(
              `apps.DeploymentStrategy{Type:${JSON.stringify(str(strategy.type))}, RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}`,
            ),
            ['Recreate', 'RollingUpdate'],
          ),
        );
    }
    out.push(...nonNegative('spec.minReadySeconds', spec.minReadySeconds));
    out.push(...nonNegative('spec.revisionHistoryLimit', spec.revisionHistoryLimit));
    const pds = numOr(spec.progressDeadlineSeconds);
    if (pds !== undefined) {
      out.push(...nonNegative('spec.progressDeadlineSeconds', pds));
      if (pds <= int(spec.minReadySeconds)) {
        out.push(invalid('spec.progressDeadlineSeconds', pds, 'must be greater than minReadySeconds'));
      }
    }
    out.push(...immutableSelector(obj, old));
    out.push(
      ...replicaStatusCauses(
        statusOf(obj),
        [
          'observedGeneration',
          'replicas',
          'updatedReplicas',
          'readyReplicas',
          'availableReplicas',
          'unavailableReplicas',
          'collisionCount',
        ],
        ['updatedReplicas', 'readyReplicas', 'availableReplicas'],
      ),
    );
    return out;
  },
  columns: [
    nameColumn(),
    col('Ready', 'string', 'Number of the pod with ready state'),
    col('Up-to-date', 'string', docs.deploymentStatus.updatedReplicas),
    col('Available', 'string', docs.deploymentStatus.availableReplicas),
    ageColumn(),
    col('Containers', 'string', CONTAINERS_DOC, 1),
    col('Images', 'string', IMAGES_DOC, 1),
    col('Selector', 'string', docs.deploymentSpec.selector, 1),
  ],
  row(obj, now) {
    const spec = specOf(obj);
    const status = statusOf(obj);
    const [names, images] = containerCells(spec.template);
    const parsed = labelSelectorAsSelector(spec.selector);
    return [
      nameOf(obj),
      `${int(status.readyReplicas)}/${int(spec.replicas)}`,
      int(status.updatedReplicas),
      int(status.availableReplicas),
      age(obj, now),
      names,
      images,
      parsed ? selectorString(parsed) : '<invalid>',
    ];
  },
};

// ---------------------------------------------------------------------------------------------
// ReplicaSets

const replicasets: KindBehaviour = {
  defaults(obj) {
    const spec = ensureObj(obj, 'spec');
    if (numOr(spec.replicas) === undefined) spec.replicas = 1;
    defaultPodTemplate(ensureObj(spec, 'template'));
    const status = ensureObj(obj, 'status');
    if (status.replicas === undefined) status.replicas = 0;
  },
  validate(obj, old) {
    const spec = specOf(obj);
    const out = nonNegative('spec.replicas', spec.replicas);
    out.push(...nonNegative('spec.minReadySeconds', spec.minReadySeconds));
    const sel = validateSelector(spec, 'deployment', 'invalid label selector');
    out.push(...sel.causes);
    if (sel.ok) out.push(...validateReplicaSetTemplate(spec));
    out.push(...immutableSelector(obj, old));
    out.push(
      ...replicaStatusCauses(
        statusOf(obj),
        ['replicas', 'fullyLabeledReplicas', 'readyReplicas', 'availableReplicas', 'observedGeneration'],
        ['fullyLabeledReplicas', 'readyReplicas', 'availableReplicas'],
      ),
    );
    return out;
  },
  columns: [
    nameColumn(),
    col('Desired', 'integer', docs.replicaSetSpec.replicas),
    col('Current', 'integer', docs.replicaSetStatus.replicas),
    col('Ready', 'integer', docs.replicaSetStatus.readyReplicas),
    ageColumn(),
    col('Containers', 'string', CONTAINERS_DOC, 1),
    col('Images', 'string', IMAGES_DOC, 1),
    col('Selector', 'string', docs.replicaSetSpec.selector, 1),
  ],
  row(obj, now) {
    const spec = specOf(obj);
    const status = statusOf(obj);
    const [names, images] = containerCells(spec.template);
    return [
      nameOf(obj),
      int(spec.replicas),
      int(status.replicas),
      int(status.readyReplicas),
      age(obj, now),
      names,
      images,
      formatLabelSelector(spec.selector),
    ];
  },
  fieldSelectors: { 'status.replicas': (o) => String(int(dig(o, 'status', 'replicas'))) },
};

// ---------------------------------------------------------------------------------------------
// StatefulSets

const statefulsets: KindBehaviour = {
  defaults(obj) {
    const spec = ensureObj(obj, 'spec');
    def(spec, 'podManagementPolicy', 'OrderedReady');
    const strategy = ensureObj(spec, 'updateStrategy');
    if (!str(strategy.type)) {
      strategy.type = 'RollingUpdate';
      ensureObj(strategy, 'rollingUpdate');
    }
    if (
      strategy.type === 'RollingUpdate' &&
      isObj(strategy.rollingUpdate) &&
      numOr(strategy.rollingUpdate.partition) === undefined
    ) {
      strategy.rollingUpdate.partition = 0;
    }
    const retention = ensureObj(spec, 'persistentVolumeClaimRetentionPolicy');
    def(retention, 'whenDeleted', 'Retain');
    def(retention, 'whenScaled', 'Retain');
    if (numOr(spec.replicas) === undefined) spec.replicas = 1;
    if (numOr(spec.revisionHistoryLimit) === undefined) spec.revisionHistoryLimit = 10;
    defaultPodTemplate(ensureObj(spec, 'template'));
    for (const claim of objs(spec.volumeClaimTemplates)) {
      const m = ensureObj(claim, 'metadata');
      if (m.creationTimestamp === undefined) m.creationTimestamp = null;
      defaultClaimSpec(ensureObj(claim, 'spec'));
      def(ensureObj(claim, 'status'), 'phase', 'Pending');
    }
    const status = ensureObj(obj, 'status');
    if (status.replicas === undefined) status.replicas = 0;
    if (status.availableReplicas === undefined) status.availableReplicas = 0;
  },
  validate(obj, old) {
    const spec = specOf(obj);
    const out: StatusCause[] = [];
    const pmp = str(spec.podManagementPolicy);
    if (!pmp) out.push(required('spec.podManagementPolicy'));
    else if (pmp !== 'OrderedReady' && pmp !== 'Parallel') {
      out.push(invalid('spec.podManagementPolicy', pmp, "must be 'OrderedReady' or 'Parallel'"));
    }
    const strategy = isObj(spec.updateStrategy) ? spec.updateStrategy : {};
    const ru = strategy.rollingUpdate;
    switch (strategy.type) {
      case undefined:
      case '':
        out.push(required('spec.updateStrategy'));
        break;
      case 'OnDelete':
        if (ru !== undefined && ru !== null) {
          out.push(
            invalid(
              'spec.updateStrategy.rollingUpdate',
              ru,
              "only allowed for updateStrategy 'RollingUpdate'",
            ),
          );
        }
        break;
      case 'RollingUpdate':
        if (isObj(ru)) {
          out.push(...nonNegative('spec.updateStrategy.rollingUpdate.partition', ru.partition));
          if (ru.maxUnavailable !== undefined && ru.maxUnavailable !== null) {
            const p = 'spec.updateStrategy.rollingUpdate.maxUnavailable';
            out.push(...validateIntOrPercent(ru.maxUnavailable, p));
            if (intOrPercentValue(ru.maxUnavailable) === 0)
              out.push(invalid(p, new GoValue(goIntOrString(ru.maxUnavailable)), 'cannot be 0'));
            out.push(...notMoreThan100(ru.maxUnavailable, p));
          }
        }
        break;
      default:
        out.push(invalid('spec.updateStrategy', strategy, "must be 'RollingUpdate' or 'OnDelete'"));
    }
    const retention = isObj(spec.persistentVolumeClaimRetentionPolicy)
      ? spec.persistentVolumeClaimRetentionPolicy
      : undefined;
    if (retention) {
      for (const f of ['whenDeleted', 'whenScaled']) {
        const v = str(retention[f]);
        if (v !== 'Retain' && v !== 'Delete') {
          out.push(notSupported(`spec.persistentVolumeClaimRetentionPolicy.${f}`, v, ['Retain', 'Delete']));
        }
      }
    }
    out.push(...nonNegative('spec.replicas', spec.replicas));
    out.push(...nonNegative('spec.minReadySeconds', spec.minReadySeconds));
    if (isObj(spec.ordinals)) out.push(...nonNegative('spec.ordinals.start', spec.ordinals.start));
    const sel = validateSelector(spec, 'statefulset', '');
    out.push(...sel.causes);
    if (sel.ok) {
      out.push(...templateMatches(spec));
      // Only the template's labels are checked here: its pod spec is validated when pods are created.
      out.push(...validateLabels(dig(spec, 'template', 'metadata', 'labels'), 'spec.template.labels'));
    }
    const restart = str(dig(spec, 'template', 'spec', 'restartPolicy'));
    if (restart !== 'Always') out.push(notSupported('spec.template.spec.restartPolicy', restart, ['Always']));
    if (numOr(dig(spec, 'template', 'spec', 'activeDeadlineSeconds')) !== undefined) {
      out.push(
        forbidden(
          'spec.template.spec.activeDeadlineSeconds',
          'activeDeadlineSeconds in StatefulSet is not Supported',
        ),
      );
    }
    if (old) {
      const next = structuredClone(spec);
      const prev = specOf(old);
      for (const f of [
        'replicas',
        'template',
        'updateStrategy',
        'minReadySeconds',
        'ordinals',
        'persistentVolumeClaimRetentionPolicy',
      ]) {
        next[f] = prev[f];
      }
      if (!semanticEqual(next, prev)) {
        out.push(
          forbidden(
            'spec',
            "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
          ),
        );
      }
    }
    const status = statusOf(obj);
    out.push(
      ...statusNonNegative(status, [
        'replicas',
        'readyReplicas',
        'currentReplicas',
        'updatedReplicas',
        'availableReplicas',
        'observedGeneration',
        'collisionCount',
      ]),
    );
    const msg = 'cannot be greater than status.replicas';
    for (const f of ['readyReplicas', 'currentReplicas', 'updatedReplicas', 'availableReplicas']) {
      if (int(status[f]) > int(status.replicas)) out.push(invalid(`status.${f}`, int(status[f]), msg));
    }
    if (int(status.availableReplicas) > int(status.readyReplicas)) {
      out.push(
        invalid(
          'status.availableReplicas',
          int(status.availableReplicas),
          'cannot be greater than status.readyReplicas',
        ),
      );
    }
    return out;
  },
  columns: [
    nameColumn(),
    col('Ready', 'string', 'Number of the pod with ready state'),
    ageColumn(),
    col('Containers', 'string', CONTAINERS_DOC, 1),
    col('Images', 'string', IMAGES_DOC, 1),
  ],
  row(obj, now) {
    const spec = specOf(obj);
    const [names, images] = containerCells(spec.template);
    return [
      nameOf(obj),
      `${int(dig(obj, 'status', 'readyReplicas'))}/${int(spec.replicas)}`,
      age(obj, now),
      names,
      images,
    ];
  },
};

// ---------------------------------------------------------------------------------------------
// DaemonSets

/**
 * The DaemonSet's template generation: apps/v1 carries the internal `spec.templateGeneration`
 * in this annotation (`pkg/apis/apps/v1/conversion.go`), and the DaemonSet controller labels
 * its pods with it (`pod-template-generation`).
 */
export const TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation';

/** The annotation's value as conversion reads it: absent is 0, anything but an integer a 400. */
function templateGeneration(obj: Record<string, unknown>): number {
  const value = dig(obj, 'metadata', 'annotations', TEMPLATE_GENERATION_ANNOTATION);
  if (value === undefined) return 0;
  const s = typeof value === 'string' ? value : String(value);
  if (!/^[+-]?\d+$/.test(s) || !Number.isSafeInteger(Number(s))) {
    throw ApiError.badRequest(`strconv.ParseInt: parsing ${JSON.stringify(s)}: invalid syntax`);
  }
  return Number(s);
}

const daemonsets: KindBehaviour = {
  prepare(obj, old) {
    // PrepareForCreate: at least 1. PrepareForUpdate: one more than before when the pod
    // template changed, else what the client sent (a real API server writes 0 back when the
    // client dropped the annotation).
    let generation = templateGeneration(obj);
    if (!old) generation = Math.max(generation, 1);
    else if (!deepEqual(dig(old, 'spec', 'template'), dig(obj, 'spec', 'template')))
      generation = templateGeneration(old) + 1;
    ensureObj(ensureObj(obj, 'metadata'), 'annotations')[TEMPLATE_GENERATION_ANNOTATION] = String(generation);
  },
  defaults(obj) {
    const spec = ensureObj(obj, 'spec');
    const strategy = ensureObj(spec, 'updateStrategy');
    def(strategy, 'type', 'RollingUpdate');
    if (strategy.type === 'RollingUpdate') {
      const ru = ensureObj(strategy, 'rollingUpdate');
      if (ru.maxUnavailable === undefined || ru.maxUnavailable === null) ru.maxUnavailable = 1;
      if (ru.maxSurge === undefined || ru.maxSurge === null) ru.maxSurge = 0;
    }
    if (numOr(spec.revisionHistoryLimit) === undefined) spec.revisionHistoryLimit = 10;
    defaultPodTemplate(ensureObj(spec, 'template'));
    const status = ensureObj(obj, 'status');
    for (const f of [
      'currentNumberScheduled',
      'numberMisscheduled',
      'desiredNumberScheduled',
      'numberReady',
    ]) {
      if (status[f] === undefined) status[f] = 0;
    }
  },
  validate(obj, old) {
    const spec = specOf(obj);
    const out: StatusCause[] = [];
    if (spec.selector !== undefined && spec.selector !== null)
      out.push(...validateLabelSelector(spec.selector, 'spec.selector'));
    const parsed = labelSelectorAsSelector(spec.selector);
    const labels = dig(spec, 'template', 'metadata', 'labels');
    if (parsed && !selectorMatches(parsed, strMap(labels))) {
      out.push(
        invalid(
          'spec.template.metadata.labels',
          new GoValue(goStringMap(labels)),
          '`selector` does not match template `labels`',
        ),
      );
    }
    const sel = spec.selector;
    if (isObj(sel) && Object.keys(strMap(sel.matchLabels)).length + objs(sel.matchExpressions).length === 0) {
      out.push(invalid('spec.selector', selectorValue(sel), 'empty selector is invalid for daemonset'));
    }
    out.push(...validatePodTemplate(spec.template, 'spec.template'));
    const restart = str(dig(spec, 'template', 'spec', 'restartPolicy'));
    if (restart !== 'Always') out.push(notSupported('spec.template.spec.restartPolicy', restart, ['Always']));
    if (numOr(dig(spec, 'template', 'spec', 'activeDeadlineSeconds')) !== undefined) {
      out.push(
        forbidden(
          'spec.template.spec.activeDeadlineSeconds',
          'activeDeadlineSeconds in DaemonSet is not Supported',
        ),
      );
    }
    out.push(...nonNegative('spec.minReadySeconds', spec.minReadySeconds));
    const strategy = isObj(spec.updateStrategy) ? spec.updateStrategy : {};
    switch (strategy.type) {
      case 'OnDelete':
        break;
      case 'RollingUpdate': {
        const ru = strategy.rollingUpdate;
        if (!isObj(ru)) {
          out.push(required('spec.updateStrategy.rollingUpdate'));
          break;
        }
        const p = 'spec.updateStrategy.rollingUpdate';
        out.push(...validateIntOrPercent(ru.maxUnavailable, `${p}.maxUnavailable`));
        out.push(...validateIntOrPercent(ru.maxSurge, `${p}.maxSurge`));
        out.push(...notMoreThan100(ru.maxUnavailable, `${p}.maxUnavailable`));
        out.push(...notMoreThan100(ru.maxSurge, `${p}.maxSurge`));
        const hasUnavailable = intOrPercentValue(ru.maxUnavailable) !== 0;
        const hasSurge = intOrPercentValue(ru.maxSurge) !== 0;
        if (hasUnavailable && hasSurge) {
          out.push(
            invalid(
              `${p}.maxSurge`,
              new GoValue(goIntOrString(ru.maxSurge)),
              'may not be set when maxUnavailable is non-zero',
            ),
          );
        } else if (!hasUnavailable && !hasSurge) {
          out.push(required(`${p}.maxUnavailable`, 'cannot be 0 when maxSurge is 0'));
        }
        break;
      }
      default:
        out.push(
          notSupported(
            'spec.updateStrategy',
            new GoValue(
              `apps.DaemonSetUpdateStrategy{Type:${JSON.stringify(str(strategy.type))}, RollingUpdate:(*apps.RollingUpdateDaemonSet)(nil)}`,
            ),
            ['RollingUpdate', 'OnDelete'],
          ),
        );
    }
    out.push(...nonNegative('spec.revisionHistoryLimit', spec.revisionHistoryLimit));
    out.push(...immutableSelector(obj, old));
    out.push(
      ...statusNonNegative(statusOf(obj), [
        'currentNumberScheduled',
        'numberMisscheduled',
        'desiredNumberScheduled',
        'numberReady',
        'observedGeneration',
        'updatedNumberScheduled',
        'numberAvailable',
        'numberUnavailable',
        'collisionCount',
      ]),
    );
    return out;
  },
  columns: [
    nameColumn(),
    col('Desired', 'integer', docs.daemonSetStatus.desiredNumberScheduled),
    col('Current', 'integer', docs.daemonSetStatus.currentNumberScheduled),
    col('Ready', 'integer', docs.daemonSetStatus.numberReady),
    col('Up-to-date', 'integer', docs.daemonSetStatus.updatedNumberScheduled),
    col('Available', 'integer', docs.daemonSetStatus.numberAvailable),
    col('Node Selector', 'string', docs.podSpec.nodeSelector),
    ageColumn(),
    col('Containers', 'string', CONTAINERS_DOC, 1),
    col('Images', 'string', IMAGES_DOC, 1),
    col('Selector', 'string', docs.daemonSetSpec.selector, 1),
  ],
  row(obj, now) {
    const spec = specOf(obj);
    const status = statusOf(obj);
    const [names, images] = containerCells(spec.template);
    return [
      nameOf(obj),
      int(status.desiredNumberScheduled),
      int(status.currentNumberScheduled),
      int(status.numberReady),
      int(status.updatedNumberScheduled),
      int(status.numberAvailable),
      formatLabels(dig(spec, 'template', 'spec', 'nodeSelector')),
      age(obj, now),
      names,
      images,
      formatLabelSelector(spec.selector),
    ];
  },
};

/** apps/v1 behaviours, keyed by plural resource. */
export const appsBehaviours: Record<string, KindBehaviour> = {
  deployments,
  replicasets,
  statefulsets,
  daemonsets,
};
