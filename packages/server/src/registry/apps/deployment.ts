/**
 * The registry entry of `Deployment` (apps/v1 `deployments`): its resource type and
 * defaults, validation, printer columns.
 */
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
import { deploymentStatusStrategy } from '../shared/status-strategy.js';
import {
  def,
  ensureObj,
  forbidden,
  GoValue,
  goIntOrString,
  int,
  invalid,
  isObj,
  labelSelectorAsSelector,
  nonNegative,
  notSupported,
  numOr,
  required,
  selectorString,
  str,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import {
  age,
  containerCells,
  immutableSelector,
  intOrPercentValue,
  nameOf,
  notMoreThan100,
  replicaStatusCauses,
  specOf,
  statusOf,
  validateIntOrPercent,
  validateReplicaSetTemplate,
  validateSelector,
} from './shared.js';

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

/** `Deployment` (apps/v1 `deployments`): how the registry serves, validates and prints it. */
export const deploymentKind: ResourceType = appsKind({
  statusStrategy: deploymentStatusStrategy,
  annotationsBumpGeneration: true,
  behaviour: deployments,
  resource: 'deployments',
  kind: 'Deployment',
  shortNames: ['deploy'],
});
