/**
 * What the API server knows about each built-in kind beyond its OpenAPI schema: defaulting,
 * kind-specific validation, kubectl's Table columns and the extra field selectors.
 *
 * @example
 * ```ts
 * const deployments = builtinBehaviours['apps/deployments']!;
 * deployments.defaults?.(obj);               // replicas: 1, strategy RollingUpdate 25%/25%, …
 * const causes = deployments.validate?.(obj); // [] when valid
 * const cells = deployments.row(obj, new Date()); // ['web', '0/1', 0, 0, '5s', 'nginx', 'nginx', 'app=web']
 * ```
 */
import { admissionBehaviours } from './admission.js';
import { admissionPolicyBehaviours } from './admission-policy.js';
import { apiextensionsBehaviours } from './apiextensions.js';
import { apiregistrationBehaviours } from './apiregistration.js';
import { appsBehaviours } from './apps.js';
import { autoscalingBehaviours } from './autoscaling.js';
import { batchBehaviours } from './batch.js';
import { certificatesBehaviours } from './certificates.js';
import { coordinationBehaviours } from './coordination.js';
import { coreBehaviours } from './core.js';
import { coreClusterBehaviours } from './core-cluster.js';
import { coreWorkloadBehaviours } from './core-workloads.js';
import { createdAtBehaviour } from './default.js';
import { controllerRevisionBehaviours, discoveryBehaviours } from './discovery.js';
import { eventsBehaviours } from './events.js';
import { flowcontrolBehaviours } from './flowcontrol.js';
import { networkingBehaviours } from './networking.js';
import { nodeBehaviours } from './node.js';
import { policyBehaviours } from './policy.js';
import { rbacBehaviours } from './rbac.js';
import { schedulingBehaviours } from './scheduling.js';
import { storageBehaviours } from './storage.js';
import type { KindBehaviour } from './types.js';

export type { KindBehaviour, TableColumnDefinition } from './types.js';
export { humanDuration } from './util.js';

function prefixed(group: string, behaviours: Record<string, KindBehaviour>): [string, KindBehaviour][] {
  return Object.entries(behaviours).map(([resource, b]) => [`${group}/${resource}`, b]);
}

/**
 * The behaviour of every built-in resource, keyed by `${group}/${resource}` with '' for the core
 * group: `/pods`, `apps/deployments`, `rbac.authorization.k8s.io/clusterroles`, …
 */
export const builtinBehaviours: Readonly<Record<string, KindBehaviour>> = Object.freeze(
  Object.fromEntries([
    ...prefixed('', coreBehaviours),
    ...prefixed('', coreWorkloadBehaviours),
    ...prefixed('', coreClusterBehaviours),
    ...prefixed('apps', appsBehaviours),
    ...prefixed('apps', controllerRevisionBehaviours),
    ...prefixed('batch', batchBehaviours),
    ...prefixed('autoscaling', autoscalingBehaviours),
    ...prefixed('coordination.k8s.io', coordinationBehaviours),
    ...prefixed('discovery.k8s.io', discoveryBehaviours),
    ...prefixed('events.k8s.io', eventsBehaviours),
    ...prefixed('rbac.authorization.k8s.io', rbacBehaviours),
    ...prefixed('admissionregistration.k8s.io', admissionBehaviours),
    ...prefixed('admissionregistration.k8s.io', admissionPolicyBehaviours),
    ...prefixed('policy', policyBehaviours),
    ...prefixed('networking.k8s.io', networkingBehaviours),
    ...prefixed('storage.k8s.io', storageBehaviours),
    ...prefixed('scheduling.k8s.io', schedulingBehaviours),
    ...prefixed('node.k8s.io', nodeBehaviours),
    ...prefixed('certificates.k8s.io', certificatesBehaviours),
    ...prefixed('apiregistration.k8s.io', apiregistrationBehaviours),
    ...prefixed('flowcontrol.apiserver.k8s.io', flowcontrolBehaviours),
    ...prefixed('apiextensions.k8s.io', apiextensionsBehaviours),
  ]),
);

/**
 * For built-in kinds without a printer: the apiserver's default table convertor, whose columns
 * are `Name` and `Created At` (RFC 3339), as `kubectl get roles` shows.
 */
export const defaultBehaviour: KindBehaviour = createdAtBehaviour();
