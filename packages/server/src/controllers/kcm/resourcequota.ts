/**
 * The resource quota controller of kube-controller-manager (`pkg/controller/resourcequota`): a
 * ResourceQuota's `status.hard` mirrors `spec.hard`, and `status.used` counts what its namespace
 * holds of each resource named there — object counts (`pods`, `services`, `configmaps`,
 * `count/<resource>[.<group>]`, …) and compute and storage sums (`requests.cpu`, `limits.memory`,
 * `requests.storage`, per storage class), each object counted as `kubeloop/api`'s `quotaUsage`
 * counts it — as the ResourceQuota admission plugin, which enforces the quota, does.
 */

import {
  formatQuotaAmount,
  type JsonObject,
  LEGACY_QUOTA_COUNTS,
  quotaUsage,
  sumQuotaAmounts,
} from 'kubeloop/api';
import {
  ConfigMap,
  CronJob,
  DaemonSet,
  Deployment,
  HorizontalPodAutoscaler,
  Job,
  type KubeObject,
  PersistentVolumeClaim,
  Pod,
  PodDisruptionBudget,
  ReplicaSet,
  ReplicationController,
  type ResourceDescriptor,
  ResourceQuota,
  Secret,
  Service,
  ServiceAccount,
  StatefulSet,
} from 'kubeloop/client';
import { type CacheReader, type ControllerDefinition, controller, deepEqual } from 'kubeloop/runtime';
import { updateStatus } from '../status-write.js';
import { NamespaceIndex } from './namespace-index.js';

/** How often every quota is recounted (kube: `--resource-quota-sync-period`, 5 min), for kinds it does not watch. */
const RESYNC_MS = 30_000;

/** The kinds `count/<resource>.<group>` can name, by that name (core kinds without a group). */
const COUNTABLE: Record<string, ResourceDescriptor> = {
  pods: Pod,
  services: Service,
  configmaps: ConfigMap,
  secrets: Secret,
  persistentvolumeclaims: PersistentVolumeClaim,
  replicationcontrollers: ReplicationController,
  resourcequotas: ResourceQuota,
  serviceaccounts: ServiceAccount,
  'deployments.apps': Deployment,
  'replicasets.apps': ReplicaSet,
  'statefulsets.apps': StatefulSet,
  'daemonsets.apps': DaemonSet,
  'jobs.batch': Job,
  'cronjobs.batch': CronJob,
  'horizontalpodautoscalers.autoscaling': HorizontalPodAutoscaler,
  'poddisruptionbudgets.policy': PodDisruptionBudget,
};

/** The kind whose objects a quota resource counts, and the name its usage is listed under. */
function countedKind(resource: string): ResourceDescriptor | undefined {
  if (resource.startsWith('count/')) return COUNTABLE[resource.slice('count/'.length)];
  if (LEGACY_QUOTA_COUNTS.includes(resource)) return COUNTABLE[resource];
  if (resource === 'services.loadbalancers' || resource === 'services.nodeports') return Service;
  if (/^(?:(?:requests|limits)\.)?(?:cpu|memory|ephemeral-storage)$/.test(resource)) return Pod;
  if (
    /^(?:.+\.storageclass\.storage\.k8s\.io\/)?(?:requests\.storage|persistentvolumeclaims)$/.test(resource)
  )
    return PersistentVolumeClaim;
  return undefined;
}

/** What a namespace uses of `resource`: the sum of what each object of the kind it counts adds. */
async function usage(resource: string, ns: string, cache: CacheReader): Promise<string | undefined> {
  const kind = countedKind(resource);
  if (!kind) return undefined;
  const objects = await cache.list(kind, { namespace: ns });
  return formatQuotaAmount(
    sumQuotaAmounts(
      objects.map((o) => quotaUsage(kind.group, kind.plural ?? '', o as unknown as JsonObject).get(resource)),
    ),
  );
}

/** The resource quota controller (`resourcequota`). */
export function resourceQuotaController(): ControllerDefinition<ResourceQuota> {
  const quotas = new NamespaceIndex();
  const inNamespace = (o: KubeObject) => quotas.matching(o);
  return controller(ResourceQuota)
    .named('resourcequota')
    .watches(Pod, inNamespace)
    .watches(Service, inNamespace)
    .watches(PersistentVolumeClaim, inNamespace)
    .onGone((req) => {
      quotas.forget(req.namespace, req.name);
    })
    .reconcile(async (quota, { client, cache }) => {
      const ns = quota.metadata?.namespace ?? '';
      const name = quota.metadata?.name ?? '';
      quotas.set(ns, name);
      const hard = quota.spec?.hard ?? {};
      const used: Record<string, string> = {};
      for (const resource of Object.keys(hard)) {
        const u = await usage(resource, ns, cache);
        // A resource no evaluator knows is still listed, at zero, as kube's generic evaluator does.
        used[resource] = u ?? '0';
      }
      const status = { hard, used };
      if (!deepEqual(status, { hard: quota.status?.hard ?? {}, used: quota.status?.used ?? {} })) {
        // The whole status, so that resources gone from spec.hard leave it too.
        const again = await updateStatus(client, ResourceQuota, quota, status, { replace: true });
        if (again) return again;
      }
      return { requeueAfter: RESYNC_MS };
    });
}
