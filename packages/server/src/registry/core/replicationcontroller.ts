/**
 * The registry entry of `ReplicationController` (core/v1 `replicationcontrollers`): its resource type and
 * defaults, validation, printer columns.
 */
import type { StatusCause } from 'kubeloop/api';
import { containerCells } from '../apps/shared.js';
import {
  ageColumn,
  CONTAINERS_DOC,
  col,
  fieldDoc,
  IMAGES_DOC,
  type KindBehaviour,
  nameColumn,
} from '../shared/behaviour.js';
import { coreKind } from '../shared/define.js';
import { specStatusStrategy } from '../shared/status-strategy.js';
import {
  def,
  dig,
  ensureObj,
  formatLabels,
  GoValue,
  goStringMap,
  invalid,
  isObj,
  nonNegative,
  notSupported,
  numOr,
  type Obj,
  required,
  since,
  str,
  strMap,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import { validatePodTemplate } from './podspec.js';
import { defaultPodTemplate } from './podspec-defaults.js';

const CORE = 'io.k8s.api.core.v1';
/** `SetDefaults_ReplicationController`: selector and labels from the template's labels, one replica. */
function defaultReplicationController(obj: Obj): void {
  // The status struct's `replicas` has no omitempty: 0 until the controller counts.
  def(ensureObj(obj, 'status'), 'replicas', 0);
  const spec = ensureObj(obj, 'spec');
  const template = spec.template;
  const labels = isObj(template) ? dig(template, 'metadata', 'labels') : undefined;
  if (isObj(labels)) {
    if (Object.keys(strMap(spec.selector)).length === 0) spec.selector = { ...labels };
    const meta = ensureObj(obj, 'metadata');
    if (Object.keys(strMap(meta.labels)).length === 0) meta.labels = { ...labels };
  }
  if (numOr(spec.replicas) === undefined) spec.replicas = 1;
  if (isObj(template)) defaultPodTemplate(template);
}
/** `ValidateReplicationControllerSpec` with `ValidatePodTemplateSpecForRC`. */
function validateReplicationController(obj: Obj): StatusCause[] {
  const spec = isObj(obj.spec) ? obj.spec : {};
  const out: StatusCause[] = [];
  out.push(...nonNegative('spec.minReadySeconds', spec.minReadySeconds ?? 0));
  const selector = strMap(spec.selector);
  if (Object.keys(selector).length === 0) out.push(required('spec.selector'));
  out.push(...nonNegative('spec.replicas', spec.replicas));
  const template = spec.template;
  if (!isObj(template)) {
    out.push(required('spec.template'));
    return out;
  }
  const labels = strMap(dig(template, 'metadata', 'labels'));
  const entries = Object.entries(selector);
  if (entries.length > 0 && !entries.every(([k, v]) => labels[k] === v)) {
    out.push(
      invalid(
        'spec.template.metadata.labels',
        new GoValue(goStringMap(dig(template, 'metadata', 'labels'))),
        '`selector` does not match template `labels`',
      ),
    );
  }
  out.push(...validatePodTemplate(template, 'spec.template'));
  const restart = str(dig(template, 'spec', 'restartPolicy'));
  if (restart !== 'Always') out.push(notSupported('spec.template.spec.restartPolicy', restart, ['Always']));
  const deadline = dig(template, 'spec', 'activeDeadlineSeconds');
  if (deadline !== undefined && deadline !== null) {
    out.push(
      invalid(
        'spec.template.spec.activeDeadlineSeconds',
        deadline,
        'activeDeadlineSeconds in ReplicationController is not Supported',
      ),
    );
  }
  return out;
}
const replicationcontrollers: KindBehaviour = {
  // v1 ReplicationControllers orphan their pods unless told otherwise (rcStrategy, for back compatibility).
  storage: { garbageCollectionPolicy: 'OrphanDependents' },
  defaults: defaultReplicationController,
  validate: validateReplicationController,
  columns: [
    nameColumn(),
    col('Desired', 'integer', fieldDoc(`${CORE}.ReplicationControllerSpec`, 'replicas')),
    col('Current', 'integer', fieldDoc(`${CORE}.ReplicationControllerStatus`, 'replicas')),
    col('Ready', 'integer', fieldDoc(`${CORE}.ReplicationControllerStatus`, 'readyReplicas')),
    ageColumn(),
    col('Containers', 'string', CONTAINERS_DOC, 1),
    col('Images', 'string', IMAGES_DOC, 1),
    col('Selector', 'string', fieldDoc(`${CORE}.ReplicationControllerSpec`, 'selector'), 1),
  ],
  row(obj, now) {
    const spec = isObj(obj.spec) ? obj.spec : {};
    const [names, images] = containerCells(spec.template);
    return [
      str(dig(obj, 'metadata', 'name')),
      numOr(spec.replicas) ?? 0,
      numOr(dig(obj, 'status', 'replicas')) ?? 0,
      numOr(dig(obj, 'status', 'readyReplicas')) ?? 0,
      since(dig(obj, 'metadata', 'creationTimestamp'), now),
      names,
      images,
      formatLabels(spec.selector),
    ];
  },
  fieldSelectors: { 'status.replicas': (o) => String(numOr(dig(o, 'status', 'replicas')) ?? 0) },
};

/** `ReplicationController` (core/v1 `replicationcontrollers`): how the registry serves, validates and prints it. */
export const replicationControllerKind: ResourceType = coreKind({
  statusStrategy: specStatusStrategy,
  behaviour: replicationcontrollers,
  resource: 'replicationcontrollers',
  kind: 'ReplicationController',
  shortNames: ['rc'],
  categories: ['all'],
  generation: true,
  // The Scale's selector is the RC's map selector, which the scale subresource renders itself.
  subresources: {
    status: true,
    scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' },
  },
});
