/**
 * The registry entry of `DaemonSet` (apps/v1 `daemonsets`): its resource type and
 * defaults, validation, printer columns.
 */
import { ApiError, type StatusCause } from 'kubeloop/api';
import { deepEqual } from '../../util/object.js';
import { validatePodTemplate } from '../core/podspec.js';
import { defaultPodTemplate } from '../core/podspec-defaults.js';
import {
  ageColumn,
  CONTAINERS_DOC,
  col,
  IMAGES_DOC,
  type KindBehaviour,
  nameColumn,
} from '../shared/behaviour.js';
import { appsKind } from '../shared/define.js';
import { docs } from '../shared/descriptions.js';
import { specStatusStrategy } from '../shared/status-strategy.js';
import {
  def,
  dig,
  ensureObj,
  forbidden,
  formatLabelSelector,
  formatLabels,
  GoValue,
  goIntOrString,
  goStringMap,
  int,
  invalid,
  isObj,
  labelSelectorAsSelector,
  nonNegative,
  notSupported,
  numOr,
  objs,
  required,
  selectorMatches,
  str,
  strMap,
  validateLabelSelector,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import {
  age,
  containerCells,
  immutableSelector,
  intOrPercentValue,
  nameOf,
  notMoreThan100,
  selectorValue,
  specOf,
  statusNonNegative,
  statusOf,
  validateIntOrPercent,
} from './shared.js';

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

/** `DaemonSet` (apps/v1 `daemonsets`): how the registry serves, validates and prints it. */
export const daemonSetKind: ResourceType = appsKind({
  statusStrategy: specStatusStrategy,
  behaviour: daemonsets,
  resource: 'daemonsets',
  kind: 'DaemonSet',
  shortNames: ['ds'],
  subresources: { status: true },
});
