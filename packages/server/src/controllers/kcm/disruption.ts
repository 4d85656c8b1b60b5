/**
 * The disruption controller of kube-controller-manager: a PodDisruptionBudget's status, from the
 * pods its selector matches (`currentHealthy`, `desiredHealthy`, `expectedPods`,
 * `disruptionsAllowed`, the `DisruptionAllowed` condition), as `pkg/controller/disruption` does.
 * The eviction API that consumes it is the API server's business.
 */
import { labelSelectorFromObject, matchesLabels } from 'kubeloop/api';
import {
  Deployment,
  type KubeObject,
  Pod,
  PodDisruptionBudget,
  ReplicaSet,
  ReplicationController,
  StatefulSet,
} from 'kubeloop/client';
import {
  type CacheReader,
  type ControllerDefinition,
  controller,
  controllerOf,
  deepEqual,
  setCondition,
} from 'kubeloop/runtime';
import { updateStatus } from '../status-write.js';
import { NamespaceIndex } from './namespace-index.js';

const ready = (p: Pod): boolean =>
  (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

/** `intstr.GetScaledValueFromIntOrPercent`: a count, or a percentage of `total` rounded up. */
function scaled(v: number | string, total: number): number | undefined {
  if (typeof v === 'number') return v;
  const m = /^(\d+)%$/.exec(v);
  return m ? Math.ceil((Number(m[1]) * total) / 100) : undefined;
}

/**
 * The replicas the pods' controllers ask for, each controller counted once (`getExpectedScale`):
 * a ReplicaSet of a Deployment counts as the Deployment. Undefined when a pod has no controller
 * of a kind with a scale.
 */
async function expectedScale(
  pods: readonly Pod[],
  cache: CacheReader,
  ns: string,
): Promise<number | undefined> {
  const seen = new Map<string, number>();
  for (const p of pods) {
    const ref = controllerOf(p);
    if (!ref) return undefined;
    let owner: { key: string; replicas: number } | undefined;
    const replicas = (o: KubeObject & { spec?: { replicas?: number } }) => o.spec?.replicas ?? 1;
    if (ref.kind === 'ReplicaSet' && ref.apiVersion.startsWith('apps/')) {
      const rs = await cache.get(ReplicaSet, ref.name, ns);
      const dref = rs && controllerOf(rs);
      const dep = dref?.kind === 'Deployment' ? await cache.get(Deployment, dref.name, ns) : undefined;
      if (dep) owner = { key: `Deployment/${dep.metadata?.uid}`, replicas: replicas(dep) };
      else if (rs) owner = { key: `ReplicaSet/${rs.metadata?.uid}`, replicas: replicas(rs) };
    } else if (ref.kind === 'StatefulSet' && ref.apiVersion.startsWith('apps/')) {
      const ss = await cache.get(StatefulSet, ref.name, ns);
      if (ss) owner = { key: `StatefulSet/${ss.metadata?.uid}`, replicas: replicas(ss) };
    } else if (ref.kind === 'ReplicationController' && ref.apiVersion === 'v1') {
      const rc = await cache.get(ReplicationController, ref.name, ns);
      if (rc) owner = { key: `ReplicationController/${rc.metadata?.uid}`, replicas: replicas(rc) };
    }
    if (!owner) return undefined;
    seen.set(owner.key, owner.replicas);
  }
  return [...seen.values()].reduce((a, b) => a + b, 0);
}

/** How long an evicted pod may take to go before the budget counts it again. */
const DELETION_TIMEOUT_MS = 2 * 60_000;

/** The PodDisruptionBudget controller (`disruption`). */
export function disruptionController(): ControllerDefinition<PodDisruptionBudget> {
  const budgets = new NamespaceIndex();
  return controller(PodDisruptionBudget)
    .named('disruption')
    .watches(Pod, (p) => budgets.matching(p))
    .onGone((req) => {
      budgets.forget(req.namespace, req.name);
    })
    .reconcile(async (pdb, { client, cache, events }) => {
      const ns = pdb.metadata?.namespace ?? '';
      const name = pdb.metadata?.name ?? '';
      // policy/v1: an empty selector matches every pod of the namespace, a missing one none.
      const selector = labelSelectorFromObject(pdb.spec?.selector ?? {});
      budgets.set(ns, name, selector);
      if (pdb.metadata?.deletionTimestamp) return;
      const pods = (await cache.list(Pod, { namespace: ns })).filter((p) =>
        matchesLabels(selector, p.metadata?.labels),
      );
      const spec = pdb.spec ?? {};
      let expected: number | undefined;
      let desired: number | undefined;
      let failure: string | undefined;
      if (pods.length === 0) events.normal('NoPods', 'No matching pods found');
      if (spec.maxUnavailable !== undefined) {
        expected = await expectedScale(pods, cache, ns);
        const max = expected === undefined ? undefined : scaled(spec.maxUnavailable, expected);
        if (expected !== undefined && max !== undefined) desired = Math.max(0, expected - max);
      } else if (typeof spec.minAvailable === 'number') {
        expected = pods.length;
        desired = spec.minAvailable;
      } else if (typeof spec.minAvailable === 'string') {
        expected = await expectedScale(pods, cache, ns);
        desired = expected === undefined ? undefined : scaled(spec.minAvailable, expected);
      } else {
        // Neither set: policy/v1 defaulting gives minAvailable 1.
        expected = pods.length;
        desired = 1;
      }
      if (expected === undefined || desired === undefined) {
        failure = 'found no controllers for some of the pods';
        events.warning(
          'CalculateExpectedPodCountFailed',
          `Failed to calculate the number of expected pods: ${failure}`,
        );
      }
      // Pods an eviction is about to delete are not healthy; one still there after two minutes
      // (`DeletionTimeout`) was not deleted after all, and counts again.
      const disrupted: Record<string, string> = {};
      const evicted = pdb.status?.disruptedPods ?? {};
      for (const p of pods) {
        const podName = p.metadata?.name ?? '';
        const at = evicted[podName];
        if (p.metadata?.deletionTimestamp || at === undefined) continue;
        if (Date.parse(at) + DELETION_TIMEOUT_MS >= Date.now()) disrupted[podName] = at;
        else
          events.warning('NotDeleted', `Pod was expected by PDB ${ns}/${name} to be deleted but it wasn't`);
      }
      const healthy = pods.filter(
        (p) => !p.metadata?.deletionTimestamp && ready(p) && disrupted[p.metadata?.name ?? ''] === undefined,
      ).length;
      const allowed = failure || (expected ?? 0) <= 0 ? 0 : Math.max(0, healthy - (desired ?? 0));
      const conditions = setCondition(pdb.status?.conditions ?? [], {
        type: 'DisruptionAllowed',
        status: failure ? 'False' : allowed > 0 ? 'True' : 'False',
        reason: failure ? 'SyncFailed' : allowed > 0 ? 'SufficientPods' : 'InsufficientPods',
        message: failure ?? '',
        observedGeneration: pdb.metadata?.generation ?? 0,
      });
      const status = {
        currentHealthy: healthy,
        desiredHealthy: desired ?? 0,
        expectedPods: expected ?? 0,
        disruptionsAllowed: allowed,
        disruptedPods: disrupted,
        observedGeneration: pdb.metadata?.generation ?? 0,
        conditions,
      };
      if (deepEqual(status, pdb.status)) return;
      return updateStatus(client, PodDisruptionBudget, pdb, status, { replace: true });
    });
}
