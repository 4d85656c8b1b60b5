/**
 * The index of the built-in kinds: one definition per kind lives in `registry/<group>/<kind>.ts`
 * (its resource type, strategy, validation, defaults, printer, subresources and storage hooks);
 * this file lists them in the order discovery serves them.
 *
 * @example
 * ```ts
 * const deployments = builtinBehaviours['apps/deployments']!;
 * deployments.defaults?.(obj);               // replicas: 1, strategy RollingUpdate 25%/25%, …
 * const causes = deployments.validate?.(obj); // [] when valid
 * const cells = deployments.row(obj, new Date()); // ['web', '0/1', 0, 0, '5s', 'nginx', 'nginx', 'app=web']
 * ```
 */
import { mutatingWebhookConfigurationKind } from './admissionregistration/mutatingwebhookconfiguration.js';
import { validatingAdmissionPolicyKind } from './admissionregistration/validatingadmissionpolicy.js';
import { validatingAdmissionPolicyBindingKind } from './admissionregistration/validatingadmissionpolicybinding.js';
import { validatingWebhookConfigurationKind } from './admissionregistration/validatingwebhookconfiguration.js';
import { customResourceDefinitionKind } from './apiextensions/customresourcedefinition.js';
import { apiServiceKind } from './apiregistration/apiservice.js';
import { controllerRevisionKind } from './apps/controllerrevision.js';
import { daemonSetKind } from './apps/daemonset.js';
import { deploymentKind } from './apps/deployment.js';
import { replicaSetKind } from './apps/replicaset.js';
import { statefulSetKind } from './apps/statefulset.js';
import { selfSubjectReviewKind, tokenReviewKind } from './authentication/reviews.js';
import {
  localSubjectAccessReviewKind,
  selfSubjectAccessReviewKind,
  selfSubjectRulesReviewKind,
  subjectAccessReviewKind,
} from './authorization/reviews.js';
import {
  horizontalPodAutoscalerKind,
  horizontalPodAutoscalerV1Kind,
} from './autoscaling/horizontalpodautoscaler.js';
import { cronJobKind } from './batch/cronjob.js';
import { jobKind } from './batch/job.js';
import { certificateSigningRequestKind } from './certificates/certificatesigningrequest.js';
import { leaseKind } from './coordination/lease.js';
import { bindingKind } from './core/binding.js';
import { componentStatusKind } from './core/componentstatus.js';
import { configMapKind } from './core/configmap.js';
import { endpointsKind } from './core/endpoints.js';
import { eventKind } from './core/event.js';
import { limitRangeKind } from './core/limitrange.js';
import { namespaceKind } from './core/namespace.js';
import { nodeKind } from './core/node.js';
import { persistentVolumeKind } from './core/persistentvolume.js';
import { persistentVolumeClaimKind } from './core/persistentvolumeclaim.js';
import { podKind } from './core/pod.js';
import { podTemplateKind } from './core/podtemplate.js';
import { replicationControllerKind } from './core/replicationcontroller.js';
import { resourceQuotaKind } from './core/resourcequota.js';
import { secretKind } from './core/secret.js';
import { serviceKind } from './core/service.js';
import { serviceAccountKind } from './core/serviceaccount.js';
import { endpointSliceKind } from './discovery/endpointslice.js';
import { eventsV1EventKind } from './events/event.js';
import { flowSchemaKind } from './flowcontrol/flowschema.js';
import { priorityLevelConfigurationKind } from './flowcontrol/prioritylevelconfiguration.js';
import { ingressKind } from './networking/ingress.js';
import { ingressClassKind } from './networking/ingressclass.js';
import { networkPolicyKind } from './networking/networkpolicy.js';
import { runtimeClassKind } from './node/runtimeclass.js';
import { podDisruptionBudgetKind } from './policy/poddisruptionbudget.js';
import { clusterRoleKind } from './rbac/clusterrole.js';
import { clusterRoleBindingKind } from './rbac/clusterrolebinding.js';
import { roleKind } from './rbac/role.js';
import { roleBindingKind } from './rbac/rolebinding.js';
import { priorityClassKind } from './scheduling/priorityclass.js';
import type { KindBehaviour } from './shared/behaviour.js';
import { defaultBehaviour } from './shared/define.js';
import { csiDriverKind } from './storage/csidriver.js';
import { csiNodeKind } from './storage/csinode.js';
import { csiStorageCapacityKind } from './storage/csistoragecapacity.js';
import { storageClassKind } from './storage/storageclass.js';
import { volumeAttachmentKind } from './storage/volumeattachment.js';
import type { ResourceType } from './types.js';

export type { KindBehaviour, StorageHooks, TableColumnDefinition } from './shared/behaviour.js';
export { defaultBehaviour } from './shared/define.js';
export { humanDuration } from './shared/util.js';

/** Every built-in kind, in discovery's order (a group's preferred version first). */
const BUILTIN_KINDS: readonly ResourceType[] = [
  namespaceKind,
  configMapKind,
  secretKind,
  serviceKind,
  endpointsKind,
  podKind,
  nodeKind,
  serviceAccountKind,
  eventKind,
  persistentVolumeClaimKind,
  replicationControllerKind,
  podTemplateKind,
  persistentVolumeKind,
  resourceQuotaKind,
  limitRangeKind,
  componentStatusKind,
  bindingKind,
  deploymentKind,
  replicaSetKind,
  statefulSetKind,
  daemonSetKind,
  controllerRevisionKind,
  jobKind,
  cronJobKind,
  horizontalPodAutoscalerKind,
  horizontalPodAutoscalerV1Kind,
  podDisruptionBudgetKind,
  ingressKind,
  ingressClassKind,
  networkPolicyKind,
  storageClassKind,
  csiDriverKind,
  csiNodeKind,
  csiStorageCapacityKind,
  volumeAttachmentKind,
  priorityClassKind,
  certificateSigningRequestKind,
  runtimeClassKind,
  apiServiceKind,
  flowSchemaKind,
  priorityLevelConfigurationKind,
  tokenReviewKind,
  selfSubjectReviewKind,
  subjectAccessReviewKind,
  selfSubjectAccessReviewKind,
  localSubjectAccessReviewKind,
  selfSubjectRulesReviewKind,
  endpointSliceKind,
  leaseKind,
  eventsV1EventKind,
  roleKind,
  clusterRoleKind,
  roleBindingKind,
  clusterRoleBindingKind,
  mutatingWebhookConfigurationKind,
  validatingWebhookConfigurationKind,
  validatingAdmissionPolicyKind,
  validatingAdmissionPolicyBindingKind,
  customResourceDefinitionKind,
];

/** The built-in resources the local control plane serves (the kinds of a minimal cluster). */
export function builtinKinds(): ResourceType[] {
  return BUILTIN_KINDS.map((t) => ({ ...t }));
}

/**
 * The behaviour of every built-in resource that has one of its own, keyed by
 * `${group}/${resource}` with '' for the core group: `/pods`, `apps/deployments`,
 * `rbac.authorization.k8s.io/clusterroles`, … (a resource served at several versions: the
 * preferred version's).
 */
export const builtinBehaviours: Readonly<Record<string, KindBehaviour>> = Object.freeze(
  behavioursByResource(),
);

function behavioursByResource(): Record<string, KindBehaviour> {
  const out: Record<string, KindBehaviour> = {};
  for (const t of BUILTIN_KINDS) {
    const key = `${t.group}/${t.resource}`;
    if (t.behaviour !== defaultBehaviour && !(key in out)) out[key] = t.behaviour;
  }
  return out;
}
