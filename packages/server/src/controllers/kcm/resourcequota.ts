/**
 * The resource quota controller of kube-controller-manager (`pkg/controller/resourcequota`): a
 * ResourceQuota's `status.hard` mirrors `spec.hard`, and `status.used` counts what its namespace
 * holds of each resource named there — object counts (`pods`, `services`, `configmaps`,
 * `count/<resource>[.<group>]`, …) and compute and storage sums (`requests.cpu`, `limits.memory`,
 * `requests.storage`, per storage class). Enforcement at admission (the ResourceQuota admission
 * plugin) is not part of the controller.
 */

import { formatMilli, isBinary, milli } from 'kubeloop/api';
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

/** The short names quota accepts for object counts (`pods` is `count/pods`). */
const LEGACY_COUNTS = new Set([
  'pods',
  'services',
  'configmaps',
  'secrets',
  'persistentvolumeclaims',
  'replicationcontrollers',
  'resourcequotas',
]);

type Resources = Record<string, string> | undefined;

/** A pod that still uses its resources (kube's `QuotaV1Pod`: not terminal). */
const charged = (p: Pod) => p.status?.phase !== 'Succeeded' && p.status?.phase !== 'Failed';

/** A pod's request or limit of `name`: the larger of its containers' sum and any init container, plus overhead. */
function podAmount(p: Pod, which: 'requests' | 'limits', name: string): { m: number; binary: boolean } {
  const of = (r: Resources) => r?.[name];
  let sum = 0;
  let binary = false;
  for (const c of p.spec?.containers ?? []) {
    const v = of(c.resources?.[which]) ?? (which === 'requests' ? of(c.resources?.limits) : undefined);
    sum += milli(v) ?? 0;
    binary ||= isBinary(v);
  }
  for (const c of p.spec?.initContainers ?? []) {
    const v = of(c.resources?.[which]) ?? (which === 'requests' ? of(c.resources?.limits) : undefined);
    sum = Math.max(sum, milli(v) ?? 0);
    binary ||= isBinary(v);
  }
  sum += milli(of(p.spec?.overhead)) ?? 0;
  return { m: sum, binary };
}

async function usage(resource: string, ns: string, cache: CacheReader): Promise<string | undefined> {
  const count = async (kind: ResourceDescriptor, filter: (o: KubeObject) => boolean = () => true) =>
    String((await cache.list(kind, { namespace: ns })).filter(filter).length);
  if (resource.startsWith('count/')) {
    const kind = COUNTABLE[resource.slice('count/'.length)];
    return kind ? count(kind, kind === Pod ? (o) => charged(o as Pod) : undefined) : undefined;
  }
  if (LEGACY_COUNTS.has(resource)) {
    const kind = COUNTABLE[resource];
    return kind ? count(kind, kind === Pod ? (o) => charged(o as Pod) : undefined) : undefined;
  }
  if (resource === 'services.loadbalancers' || resource === 'services.nodeports') {
    const services = await cache.list(Service, { namespace: ns });
    if (resource === 'services.loadbalancers')
      return String(services.filter((s) => s.spec?.type === 'LoadBalancer').length);
    return String(
      services
        .filter((s) => s.spec?.type === 'NodePort' || s.spec?.type === 'LoadBalancer')
        .reduce(
          (n, s) =>
            n +
            (s.spec?.ports ?? []).filter((p) => p.nodePort !== undefined || s.spec?.type === 'NodePort')
              .length,
          0,
        ),
    );
  }
  const compute = /^(?:(requests|limits)\.)?(cpu|memory|ephemeral-storage)$/.exec(resource);
  if (compute) {
    const which = (compute[1] ?? 'requests') as 'requests' | 'limits';
    const name = compute[2] ?? '';
    let total = 0;
    let binary = name !== 'cpu';
    for (const p of (await cache.list(Pod, { namespace: ns })).filter(charged)) {
      const a = podAmount(p, which, name);
      total += a.m;
      if (a.m > 0) binary &&= a.binary;
    }
    return formatMilli(total, binary && total > 0);
  }
  const storage =
    /^(?:(.+)\.storageclass\.storage\.k8s\.io\/)?(requests\.storage|persistentvolumeclaims)$/.exec(resource);
  if (storage) {
    const claims = (await cache.list(PersistentVolumeClaim, { namespace: ns })).filter(
      (c) => storage[1] === undefined || c.spec?.storageClassName === storage[1],
    );
    if (storage[2] === 'persistentvolumeclaims') return String(claims.length);
    let total = 0;
    let binary = true;
    for (const c of claims) {
      const v = c.spec?.resources?.requests?.storage;
      total += milli(v) ?? 0;
      binary &&= isBinary(v);
    }
    return formatMilli(total, binary && total > 0);
  }
  return undefined;
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
        // A merge patch merges maps: resources gone from spec.hard are removed by name.
        const gone = (m: Record<string, string> | undefined, keep: Record<string, string>) =>
          Object.fromEntries(
            Object.keys(m ?? {})
              .filter((k) => !(k in keep))
              .map((k) => [k, null]),
          );
        const patch = {
          status: {
            hard: { ...gone(quota.status?.hard, hard), ...hard },
            used: { ...gone(quota.status?.used, used), ...used },
          },
        };
        await client.api(ResourceQuota, ns).patchStatus(name, patch as unknown as ResourceQuota);
      }
      return { requeueAfter: RESYNC_MS };
    });
}
