/**
 * Objects a 1.32 control plane keeps on its own beside the bootstrap namespaces: the system
 * PriorityClasses (scheduling's bootstrap) and one Local APIService per served group/version
 * (the aggregator's autoregister controller, which follows CRD groups as they come and go).
 */
import { ApiError } from 'kubeloop/api';
import { SYSTEM_NAMESPACES } from '../admission/namespace-lifecycle.js';
import { timestamp } from '../util/object.js';
import { localAPIService } from './apiregistration/apiservice.js';
import type { Registry } from './registry.js';
import type { RestStorage } from './rest.js';

const AUTOMANAGED = 'kube-aggregator.kubernetes.io/automanaged';

/** `scheduling.SystemPriorityClasses()`. */
const SYSTEM_PRIORITY_CLASSES = [
  {
    name: 'system-node-critical',
    value: 2_000_001_000,
    description: 'Used for system critical pods that must not be moved from their current node.',
  },
  {
    name: 'system-cluster-critical',
    value: 2_000_000_000,
    description:
      'Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.',
  },
];

const alreadyExists = (err: unknown): boolean => err instanceof ApiError && err.code === 409;

/** Creates the system PriorityClasses when absent. */
export async function ensureSystemPriorityClasses(rest: RestStorage, registry: Registry): Promise<void> {
  const t = registry.lookup('scheduling.k8s.io', 'v1', 'priorityclasses');
  if (!t) return;
  for (const pc of SYSTEM_PRIORITY_CLASSES) {
    if (rest.store.get(rest.key(t, undefined, pc.name))) continue;
    try {
      await rest.create(
        t,
        undefined,
        {
          apiVersion: 'scheduling.k8s.io/v1',
          kind: 'PriorityClass',
          metadata: { name: pc.name },
          value: pc.value,
          description: pc.description,
        },
        { dryRun: false },
      );
    } catch (err) {
      if (!alreadyExists(err)) throw err;
    }
  }
}

/**
 * Makes the Local APIServices match the served group/versions: a missing one is created with
 * `Available=True`, an automanaged one whose group/version is no longer served is deleted.
 */
export async function syncLocalAPIServices(rest: RestStorage, registry: Registry): Promise<void> {
  const t = registry.lookup('apiregistration.k8s.io', 'v1', 'apiservices');
  if (!t) return;
  const wanted = new Map<string, [string, string]>();
  for (const [group, versions] of registry.groups())
    for (const v of versions) wanted.set(`${v}.${group}`, [group, v]);
  for (const [name, [group, version]] of wanted) {
    if (rest.store.get(rest.key(t, undefined, name))) continue;
    const obj = localAPIService(group, version, timestamp());
    const status = obj.status;
    try {
      await rest.create(t, undefined, obj, { dryRun: false });
      // Creation resets the status (a status subresource); the controller then reports it.
      const stored = rest.get(t, undefined, name).object as Record<string, unknown>;
      await rest.update(t, undefined, name, { ...structuredClone(stored), status }, 'status', {
        dryRun: false,
      });
    } catch (err) {
      if (!alreadyExists(err)) throw err;
    }
  }
  const existing = rest.list(t, undefined, {}).items;
  for (const item of existing) {
    const meta = item.object.metadata as Record<string, unknown>;
    const labels = (meta.labels ?? {}) as Record<string, string>;
    const name = String(meta.name);
    if (labels[AUTOMANAGED] && !wanted.has(name)) {
      try {
        await rest.delete(t, undefined, name, {}, { dryRun: false });
      } catch (err) {
        if (!(err instanceof ApiError && err.code === 404)) throw err;
      }
    }
  }
}

/**
 * The objects a new cluster starts with (kube-apiserver's bootstrap controller): the system
 * namespaces and the `kubernetes` Service.
 */
export async function ensureSystemNamespacesAndService(rest: RestStorage, registry: Registry): Promise<void> {
  const nsType = registry.lookup('', 'v1', 'namespaces')!;
  for (const ns of SYSTEM_NAMESPACES) {
    if (rest.store.get(rest.key(nsType, undefined, ns))) continue;
    await rest.create(
      nsType,
      undefined,
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
      { dryRun: false },
    );
  }
  const svcType = registry.lookup('', 'v1', 'services')!;
  if (!rest.store.get(rest.key(svcType, 'default', 'kubernetes'))) {
    await rest.create(
      svcType,
      'default',
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'kubernetes', labels: { component: 'apiserver', provider: 'kubernetes' } },
        spec: {
          clusterIP: '10.96.0.1',
          ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: 6443 }],
        },
      },
      { dryRun: false },
    );
  }
}
