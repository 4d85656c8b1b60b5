/**
 * The StatefulSet controller of kube-controller-manager: pods `<set>-0 … <set>-(n-1)` with stable
 * names and hostnames, one PersistentVolumeClaim per pod and volume claim template (kept when the
 * set scales down), created in order (`OrderedReady`) or all at once (`Parallel`), and rolled out
 * from the highest ordinal down to `partition`.
 */
import { setMaxListeners } from 'node:events';
import type { Client } from 'kubeloop/client';
import {
  isAlreadyExists,
  isConflict,
  isNotFound,
  PersistentVolumeClaim,
  Pod,
  StatefulSet,
} from 'kubeloop/client';
import { defaultControllerRateLimiter, Informer, objectKey, splitKey, WorkQueue } from 'kubeloop/runtime';
import { podTemplateHash } from './deployment.js';
import { ControllerEvents, errorText } from './events.js';
import type { ControllerLog } from './garbage-collector.js';

const CONTROLLER_INDEX = 'controller-uid';
const REVISION_LABEL = 'controller-revision-hash';
const POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';
const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';

const controllerOf = (p: Pod) => p.metadata?.ownerReferences?.find((r) => r.controller === true);
const ready = (p: Pod): boolean =>
  (p.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');
const terminating = (p: Pod) => Boolean(p.metadata?.deletionTimestamp);
const healthy = (p: Pod) => !terminating(p) && p.status?.phase === 'Running' && ready(p);
const failed = (p: Pod) => p.status?.phase === 'Failed' || p.status?.phase === 'Succeeded';

/** The ordinal of a StatefulSet's pod from its name, or -1. */
export function ordinalOf(setName: string, podName: string): number {
  if (!podName.startsWith(`${setName}-`)) return -1;
  const rest = podName.slice(setName.length + 1);
  return /^(0|[1-9]\d*)$/.test(rest) ? Number(rest) : -1;
}

/** The StatefulSet controller: informers on StatefulSets and pods, a queue of StatefulSets. */
export class StatefulSetController {
  private readonly sets: Informer<StatefulSet>;
  private readonly pods: Informer<Pod>;
  private readonly queue = new WorkQueue<string>({
    name: 'statefulset',
    rateLimiter: defaultControllerRateLimiter({ baseDelayMs: 5, maxDelayMs: 10_000 }),
  });
  private readonly abort = new AbortController();
  private workers: Promise<void>[] = [];
  private readonly log: ControllerLog;
  private readonly events: ControllerEvents;

  constructor(
    private readonly client: Client,
    options: { log?: ControllerLog } = {},
  ) {
    this.log = options.log ?? (() => undefined);
    this.events = new ControllerEvents(client, 'statefulset-controller', this.log);
    setMaxListeners(0, this.abort.signal);
    this.sets = new Informer(client.api(StatefulSet, ''), {});
    this.pods = new Informer(client.api(Pod, ''), {
      indexers: { [CONTROLLER_INDEX]: (p) => controllerOf(p)?.uid },
    });
    this.sets.addEventHandler({
      onAdd: (s) => this.queue.add(objectKey(s)),
      onUpdate: (_o, s) => this.queue.add(objectKey(s)),
    });
    const owner = (p: Pod) => {
      const ref = controllerOf(p);
      if (ref?.kind === 'StatefulSet' && ref.apiVersion.startsWith('apps/'))
        this.queue.add(`${p.metadata?.namespace ?? ''}/${ref.name}`);
    };
    this.pods.addEventHandler({ onAdd: owner, onUpdate: (_o, p) => owner(p), onDelete: owner });
  }

  start(): void {
    this.sets.start(this.abort.signal);
    this.pods.start(this.abort.signal);
    // One worker: a set is synced by one worker at a time anyway, and pod names are fixed, so
    // creations never race (a repeated one is AlreadyExists).
    this.workers.push(this.work());
  }

  async stop(): Promise<void> {
    this.abort.abort();
    const closing = this.events.close();
    await this.queue.shutdown();
    await Promise.all(this.workers);
    await Promise.all([this.sets.stop(), this.pods.stop(), closing]);
  }

  private async work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      try {
        await this.reconcile(key);
        this.queue.forget(key);
      } catch (err) {
        if (!this.abort.signal.aborted) {
          if (!isConflict(err) && !isAlreadyExists(err))
            this.log('warn', 'statefulset sync failed; retrying', { key, error: String(err) });
          this.queue.addRateLimited(key);
        }
      } finally {
        this.queue.done(key);
      }
    }
  }

  /** One StatefulSet: at most one step per sync for `OrderedReady`, every step at once for `Parallel`. */
  async reconcile(key: string): Promise<void> {
    if (!this.sets.hasSynced || !this.pods.hasSynced)
      await Promise.all([this.sets.waitForSync(), this.pods.waitForSync()]);
    const { namespace = '', name } = splitKey(key);
    const set = this.sets.store.get(name, namespace);
    if (!set || set.metadata?.deletionTimestamp) return;
    const uid = set.metadata?.uid ?? '';
    const replicas = set.spec?.replicas ?? 1;
    const parallel = set.spec?.podManagementPolicy === 'Parallel';
    const updateRevision = `${name}-${podTemplateHash(set.spec?.template, set.status?.collisionCount ?? 0)}`;
    const revisionOf = (p: Pod) => p.metadata?.labels?.[REVISION_LABEL];
    const pods = this.pods.store
      .byIndex(CONTROLLER_INDEX, uid)
      .filter((p) => p.metadata?.namespace === namespace && ordinalOf(name, p.metadata?.name ?? '') >= 0);
    const byOrdinal = new Map(pods.map((p) => [ordinalOf(name, p.metadata?.name ?? ''), p]));
    const api = this.client.api(Pod, namespace);
    const del = async (p: Pod) => {
      try {
        await api.delete(p.metadata?.name ?? '', { preconditions: { uid: p.metadata?.uid ?? '' } });
        this.podEvent('delete', set, p.metadata?.name ?? '');
      } catch (err) {
        if (!isNotFound(err) && !isConflict(err)) {
          this.podEvent('delete', set, p.metadata?.name ?? '', err);
          throw err;
        }
      }
    };

    await this.steps(set, byOrdinal, replicas, parallel, updateRevision, del);

    // Status from the cache: the writes above come back as events and a new sync.
    const live = pods.filter((p) => !terminating(p));
    const updated = live.filter((p) => revisionOf(p) === updateRevision).length;
    let currentRevision = set.status?.currentRevision || updateRevision;
    const readyCount = live.filter(ready).length;
    // A rollout is over once every wanted pod is of the new revision and ready.
    if (updated === replicas && readyCount === replicas && live.length === replicas)
      currentRevision = updateRevision;
    const status = {
      observedGeneration: set.metadata?.generation ?? 0,
      replicas: live.length,
      readyReplicas: readyCount,
      currentReplicas: live.filter((p) => revisionOf(p) === currentRevision).length,
      updatedReplicas: updated,
      currentRevision,
      updateRevision,
      collisionCount: set.status?.collisionCount ?? 0,
      availableReplicas: readyCount,
    };
    const cur = (set.status ?? {}) as Record<string, unknown>;
    if (Object.entries(status).every(([k, v]) => (cur[k] ?? (typeof v === 'number' ? 0 : '')) === v)) return;
    // readyReplicas, currentReplicas and updatedReplicas are omitempty: null clears a zero.
    const patch = Object.fromEntries(
      Object.entries(status).map(([k, v]) => [
        k,
        v === 0 && ['readyReplicas', 'currentReplicas', 'updatedReplicas'].includes(k) ? null : v,
      ]),
    );
    try {
      await this.client
        .api(StatefulSet, namespace)
        .patchStatus(name, { status: patch } as unknown as StatefulSet);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  private async steps(
    set: StatefulSet,
    byOrdinal: Map<number, Pod>,
    replicas: number,
    parallel: boolean,
    updateRevision: string,
    del: (p: Pod) => Promise<void>,
  ): Promise<void> {
    const ordinals = [...byOrdinal.keys()].sort((a, b) => a - b);
    // Failed pods are replaced: delete now, recreate on the sync their deletion triggers.
    for (const i of ordinals) {
      const p = byOrdinal.get(i);
      if (p && failed(p) && !terminating(p)) {
        await del(p);
        if (!parallel) return;
      }
    }

    // Scale up: create missing ordinals, in order, each after its predecessors are healthy.
    for (let i = 0; i < replicas; i++) {
      const p = byOrdinal.get(i);
      if (!p) {
        await this.createPod(set, i, updateRevision);
        if (!parallel) return;
        continue;
      }
      if (!parallel && !healthy(p)) return;
    }

    // Scale down: the highest ordinal first, one at a time once the others are healthy.
    const condemned = ordinals.filter((i) => i >= replicas).reverse();
    for (const i of condemned) {
      const p = byOrdinal.get(i);
      if (!p) continue;
      if (terminating(p)) {
        if (parallel) continue;
        return;
      }
      if (!parallel && ordinals.some((j) => j < i && !healthy(byOrdinal.get(j) as Pod))) return;
      await del(p);
      if (!parallel) return;
    }

    // Rolling update: from the highest ordinal down to the partition, one pod at a time once all
    // the set's pods are healthy; OnDelete leaves it to the user.
    const strategy = set.spec?.updateStrategy;
    if (strategy?.type === 'OnDelete') return;
    const partition = strategy?.rollingUpdate?.partition ?? 0;
    const wanted = ordinals.filter((i) => i < replicas);
    if (wanted.some((i) => !healthy(byOrdinal.get(i) as Pod))) return;
    for (const i of [...wanted].reverse()) {
      if (i < partition) break;
      const p = byOrdinal.get(i) as Pod;
      if (p.metadata?.labels?.[REVISION_LABEL] !== updateRevision) {
        await del(p);
        return;
      }
    }
  }

  private async createPod(set: StatefulSet, ordinal: number, revision: string): Promise<void> {
    const name = set.metadata?.name ?? '';
    const namespace = set.metadata?.namespace ?? '';
    const podName = `${name}-${ordinal}`;
    const template = set.spec?.template ?? {};
    const spec = template.spec ?? { containers: [] };
    const claims = set.spec?.volumeClaimTemplates ?? [];
    const claimNames = new Set(claims.map((c) => c.metadata?.name ?? ''));
    // Claims first, so that the pod never waits for a claim that nobody creates.
    const pvcs = this.client.api(PersistentVolumeClaim, namespace);
    for (const c of claims) {
      const claimName = `${c.metadata?.name}-${name}-${ordinal}`;
      try {
        await pvcs.create({
          metadata: {
            name: claimName,
            labels: { ...c.metadata?.labels, ...set.spec?.selector?.matchLabels },
            ...(c.metadata?.annotations && { annotations: c.metadata.annotations }),
          },
          spec: c.spec ?? {},
        });
        this.events.event(
          StatefulSet,
          set,
          'Normal',
          'SuccessfulCreate',
          `create Claim ${claimName} Pod ${podName} in StatefulSet ${name} success`,
        );
      } catch (err) {
        if (!isAlreadyExists(err)) {
          this.events.event(
            StatefulSet,
            set,
            'Warning',
            'FailedCreate',
            `create Claim ${claimName} for Pod ${podName} in StatefulSet ${name} failed error: ${errorText(err)}`,
          );
          throw err;
        }
      }
    }
    const pod = {
      metadata: {
        name: podName,
        labels: {
          ...template.metadata?.labels,
          [REVISION_LABEL]: revision,
          [POD_NAME_LABEL]: podName,
          [POD_INDEX_LABEL]: String(ordinal),
        },
        ...(template.metadata?.annotations && { annotations: template.metadata.annotations }),
        ownerReferences: [
          {
            apiVersion: 'apps/v1',
            kind: 'StatefulSet',
            name,
            uid: set.metadata?.uid ?? '',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: {
        ...spec,
        hostname: podName,
        ...(set.spec?.serviceName && { subdomain: set.spec.serviceName }),
        ...(claims.length > 0 && {
          volumes: [
            ...(spec.volumes ?? []).filter((v) => !claimNames.has(v.name)),
            ...claims.map((c) => ({
              name: c.metadata?.name ?? '',
              persistentVolumeClaim: { claimName: `${c.metadata?.name}-${name}-${ordinal}` },
            })),
          ],
        }),
      },
    } as Pod;
    try {
      await this.client.api(Pod, namespace).create(pod);
      this.podEvent('create', set, podName);
    } catch (err) {
      if (!isAlreadyExists(err)) this.podEvent('create', set, podName, err);
      throw err;
    }
  }

  /** `recordPodEvent`: `SuccessfulCreate` / `FailedDelete`… with the StatefulSet controller's wording. */
  private podEvent(verb: 'create' | 'delete', set: StatefulSet, pod: string, err?: unknown): void {
    const Verb = verb === 'create' ? 'Create' : 'Delete';
    if (err === undefined)
      this.events.event(
        StatefulSet,
        set,
        'Normal',
        `Successful${Verb}`,
        `${verb} Pod ${pod} in StatefulSet ${set.metadata?.name} successful`,
      );
    else
      this.events.event(
        StatefulSet,
        set,
        'Warning',
        `Failed${Verb}`,
        `${verb} Pod ${pod} in StatefulSet ${set.metadata?.name} failed error: ${errorText(err)}`,
      );
  }
}
