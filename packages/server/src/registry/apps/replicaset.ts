/**
 * The registry entry of `ReplicaSet` (apps/v1 `replicasets`): its resource type and
 * defaults, validation, printer columns, field selectors.
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
import { specStatusStrategy } from '../shared/status-strategy.js';
import { ensureObj, formatLabelSelector, int, nonNegative, numOr } from '../shared/util.js';
import type { ResourceType } from '../types.js';
import {
  age,
  containerCells,
  immutableSelector,
  nameOf,
  replicaStatusCauses,
  specOf,
  statusOf,
  validateReplicaSetTemplate,
  validateSelector,
} from './shared.js';

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
};

/** `ReplicaSet` (apps/v1 `replicasets`): how the registry serves, validates and prints it. */
export const replicaSetKind: ResourceType = appsKind({
  statusStrategy: specStatusStrategy,
  behaviour: replicasets,
  resource: 'replicasets',
  kind: 'ReplicaSet',
  shortNames: ['rs'],
});
