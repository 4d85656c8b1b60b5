/**
 * The registry entry of `StatefulSet` (apps/v1 `statefulsets`): its resource type and
 * defaults, validation, printer columns.
 */
import type { StatusCause } from 'kubeloop/api';
import { defaultClaimSpec } from '../core/persistentvolumeclaim.js';
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
import { specStatusStrategy } from '../shared/status-strategy.js';
import {
  def,
  dig,
  ensureObj,
  forbidden,
  GoValue,
  goIntOrString,
  int,
  invalid,
  isObj,
  nonNegative,
  notSupported,
  numOr,
  type Obj,
  objs,
  required,
  semanticEqual,
  str,
  validateLabels,
} from '../shared/util.js';
import type { ResourceType } from '../types.js';
import {
  age,
  containerCells,
  intOrPercentValue,
  nameOf,
  notMoreThan100,
  specOf,
  statusNonNegative,
  statusOf,
  templateMatches,
  validateIntOrPercent,
  validateSelector,
} from './shared.js';

// ---------------------------------------------------------------------------------------------
// StatefulSets
/** The rolling update's `maxUnavailable`, if set (`maxUnavailableInUse`). */
const maxUnavailableOf = (obj: Obj | undefined): unknown =>
  dig(obj, 'spec', 'updateStrategy', 'rollingUpdate', 'maxUnavailable') ?? undefined;

const statefulsets: KindBehaviour = {
  prepare(obj, old) {
    // `dropStatefulSetDisabledFields`: MaxUnavailableStatefulSet is alpha and off in 1.32 (beta in
    // 1.35), so a new maxUnavailable is dropped, not validated, unless the old object had one.
    if (maxUnavailableOf(obj) === undefined || (old && maxUnavailableOf(old) !== undefined)) return;
    delete (dig(obj, 'spec', 'updateStrategy', 'rollingUpdate') as Obj).maxUnavailable;
  },
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

/** `StatefulSet` (apps/v1 `statefulsets`): how the registry serves, validates and prints it. */
export const statefulSetKind: ResourceType = appsKind({
  statusStrategy: specStatusStrategy,
  behaviour: statefulsets,
  resource: 'statefulsets',
  kind: 'StatefulSet',
  shortNames: ['sts'],
});
