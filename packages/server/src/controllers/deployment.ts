/**
 * The Deployment controller of kube-controller-manager: one ReplicaSet per pod template
 * (named `<deployment>-<pod-template-hash>`), rolled out with the RollingUpdate or Recreate
 * strategy, revisions in `deployment.kubernetes.io/revision`, and the status `kubectl rollout
 * status` reads.
 */
import { setMaxListeners } from 'node:events';
import type { Client } from 'kubeloop/client';
import { Deployment, isConflict, isNotFound, ReplicaSet } from 'kubeloop/client';
import { defaultControllerRateLimiter, Informer, objectKey, splitKey, WorkQueue } from 'kubeloop/runtime';
import type { ControllerLog } from './garbage-collector.js';

const HASH_LABEL = 'pod-template-hash';
const REVISION = 'deployment.kubernetes.io/revision';
const DESIRED = 'deployment.kubernetes.io/desired-replicas';
const MAX_REPLICAS = 'deployment.kubernetes.io/max-replicas';
const CONTROLLER_INDEX = 'controller-uid';

type Condition = NonNullable<NonNullable<Deployment['status']>['conditions']>[number];

/** JSON with sorted keys: equal templates hash equally whatever their key order. */
function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (v && typeof v === 'object')
    return `{${Object.keys(v)
      .sort()
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${stableJson((v as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  return JSON.stringify(v);
}

/** The `pod-template-hash` of a template: FNV-32a, written with Kubernetes' `SafeEncodeString` alphabet. */
export function podTemplateHash(template: unknown, collisionCount = 0): string {
  let h = 0x811c9dc5;
  for (const byte of Buffer.from(stableJson(template) + (collisionCount ? String(collisionCount) : ''))) {
    h ^= byte;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  const alphabet = 'bcdfghjklmnpqrstvwxz2456789';
  return [...String(h)].map((d) => alphabet[Number(d) % alphabet.length]).join('');
}

/** An int-or-percent of `replicas` (Kubernetes' `GetScaledValueFromIntOrPercent`). */
function scaled(
  v: number | string | undefined,
  fallback: string,
  replicas: number,
  roundUp: boolean,
): number {
  const x = v ?? fallback;
  if (typeof x === 'number') return x;
  const pct = Number.parseInt(x, 10);
  if (!x.endsWith('%') || Number.isNaN(pct)) return 0;
  const exact = (pct * replicas) / 100;
  return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

const revisionOf = (rs: ReplicaSet): number => Number(rs.metadata?.annotations?.[REVISION] ?? 0) || 0;
const specReplicas = (rs: ReplicaSet): number => rs.spec?.replicas ?? 0;
const now = (): string => `${new Date().toISOString().slice(0, 19)}Z`;

/** Strips the hash label, so that a ReplicaSet's template compares with its Deployment's. */
function withoutHash(template: unknown): unknown {
  const t = structuredClone(template ?? {}) as { metadata?: { labels?: Record<string, string> } };
  if (t.metadata?.labels) {
    delete t.metadata.labels[HASH_LABEL];
    if (Object.keys(t.metadata.labels).length === 0) delete t.metadata.labels;
  }
  return t;
}

/** The Deployment controller: informers on Deployments and ReplicaSets, a queue of Deployments, {@link DeploymentController.reconcile}. */
export class DeploymentController {
  private readonly deployments: Informer<Deployment>;
  private readonly sets: Informer<ReplicaSet>;
  private readonly queue = new WorkQueue<string>({
    name: 'deployment',
    rateLimiter: defaultControllerRateLimiter({ baseDelayMs: 5, maxDelayMs: 10_000 }),
  });
  private readonly abort = new AbortController();
  private workers: Promise<void>[] = [];
  private readonly log: ControllerLog;

  constructor(
    private readonly client: Client,
    options: { log?: ControllerLog } = {},
  ) {
    this.log = options.log ?? (() => undefined);
    setMaxListeners(0, this.abort.signal);
    this.deployments = new Informer(client.api(Deployment, ''), {});
    this.sets = new Informer(client.api(ReplicaSet, ''), {
      indexers: { [CONTROLLER_INDEX]: (rs) => rs.metadata?.ownerReferences?.find((r) => r.controller)?.uid },
    });
    this.deployments.addEventHandler({
      onAdd: (d) => this.queue.add(objectKey(d)),
      onUpdate: (_o, d) => this.queue.add(objectKey(d)),
    });
    const owner = (rs: ReplicaSet) => {
      const ref = rs.metadata?.ownerReferences?.find((r) => r.controller);
      if (ref?.kind === 'Deployment') this.queue.add(`${rs.metadata?.namespace ?? ''}/${ref.name}`);
    };
    this.sets.addEventHandler({ onAdd: owner, onUpdate: (_o, rs) => owner(rs), onDelete: owner });
  }

  start(): void {
    this.deployments.start(this.abort.signal);
    this.sets.start(this.abort.signal);
    for (let i = 0; i < 2; i++) this.workers.push(this.work());
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.queue.shutdown();
    await Promise.all(this.workers);
    await Promise.all([this.deployments.stop(), this.sets.stop()]);
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
          if (!isConflict(err))
            this.log('warn', 'deployment sync failed; retrying', { key, error: String(err) });
          this.queue.addRateLimited(key);
        }
      } finally {
        this.queue.done(key);
      }
    }
  }

  /** One Deployment: its new ReplicaSet, one rollout step, its status. */
  async reconcile(key: string): Promise<void> {
    if (!this.deployments.hasSynced || !this.sets.hasSynced)
      await Promise.all([this.deployments.waitForSync(), this.sets.waitForSync()]);
    const { namespace = '', name } = splitKey(key);
    const d = this.deployments.store.get(name, namespace);
    if (!d || d.metadata?.deletionTimestamp) return;
    const uid = d.metadata?.uid ?? '';
    const replicas = d.spec?.replicas ?? 1;
    const owned = this.sets.store
      .byIndex(CONTROLLER_INDEX, uid)
      .filter((rs) => rs.metadata?.namespace === namespace);
    const hash = podTemplateHash(d.spec?.template, d.status?.collisionCount ?? 0);
    const target = stableJson(withoutHash(d.spec?.template));
    let newRs = owned.find((rs) => stableJson(withoutHash(rs.spec?.template)) === target);
    const old = owned.filter((rs) => rs !== newRs).sort((a, b) => revisionOf(a) - revisionOf(b));
    const rsApi = this.client.api(ReplicaSet, namespace);
    const recreate = d.spec?.strategy?.type === 'Recreate';
    const maxSurge = recreate ? 0 : scaled(d.spec?.strategy?.rollingUpdate?.maxSurge, '25%', replicas, true);
    let maxUnavailable = recreate
      ? replicas
      : scaled(d.spec?.strategy?.rollingUpdate?.maxUnavailable, '25%', replicas, false);
    if (maxSurge === 0 && maxUnavailable === 0) maxUnavailable = 1;
    const oldActive = old.reduce((n, rs) => n + (rs.status?.replicas ?? 0), 0);

    if (!newRs && !d.spec?.paused) {
      const revision = Math.max(0, ...owned.map(revisionOf)) + 1;
      const template = structuredClone(d.spec?.template ?? {});
      template.metadata = {
        ...template.metadata,
        labels: { ...template.metadata?.labels, [HASH_LABEL]: hash },
      };
      const initial = recreate
        ? oldActive > 0
          ? 0
          : replicas
        : Math.min(
            replicas,
            Math.max(0, replicas + maxSurge - old.reduce((n, rs) => n + specReplicas(rs), 0)),
          );
      newRs = await rsApi.create({
        metadata: {
          name: `${name}-${hash}`,
          labels: { ...d.spec?.template?.metadata?.labels, [HASH_LABEL]: hash },
          annotations: {
            [REVISION]: String(revision),
            [DESIRED]: String(replicas),
            [MAX_REPLICAS]: String(replicas + maxSurge),
          },
          ownerReferences: [
            {
              apiVersion: 'apps/v1',
              kind: 'Deployment',
              name,
              uid,
              controller: true,
              blockOwnerDeletion: true,
            },
          ],
        },
        spec: {
          replicas: initial,
          ...(d.spec?.minReadySeconds !== undefined && { minReadySeconds: d.spec.minReadySeconds }),
          selector: {
            ...d.spec?.selector,
            matchLabels: { ...d.spec?.selector?.matchLabels, [HASH_LABEL]: hash },
          },
          template,
        },
      });
      return;
    }
    if (newRs && !d.spec?.paused) {
      const scale = async (rs: ReplicaSet, n: number) => {
        if (specReplicas(rs) === n) return;
        await rsApi.patch(rs.metadata?.name ?? '', {
          metadata: {
            annotations: { [DESIRED]: String(replicas), [MAX_REPLICAS]: String(replicas + maxSurge) },
          },
          spec: { replicas: n },
        });
      };
      if (recreate) {
        for (const rs of old) await scale(rs, 0);
        if (oldActive === 0) await scale(newRs, replicas);
      } else if (old.every((rs) => specReplicas(rs) === 0)) {
        await scale(newRs, replicas);
      } else {
        // Rolling update: surge the new ReplicaSet, then retire old pods as availability allows.
        const total = owned.reduce((n, rs) => n + specReplicas(rs), 0);
        const newCount = specReplicas(newRs);
        if (newCount > replicas) await scale(newRs, replicas);
        else if (total < replicas + maxSurge)
          await scale(newRs, newCount + Math.min(replicas + maxSurge - total, replicas - newCount));
        const available = owned.reduce((n, rs) => n + (rs.status?.availableReplicas ?? 0), 0);
        const newUnavailable = Math.max(0, newCount - (newRs.status?.availableReplicas ?? 0));
        let budget = available - (replicas - maxUnavailable) - newUnavailable;
        for (const rs of old) {
          if (budget <= 0) break;
          const cut = Math.min(specReplicas(rs), budget);
          if (cut <= 0) continue;
          await scale(rs, specReplicas(rs) - cut);
          budget -= cut;
        }
      }
      // The Deployment carries the revision of its current ReplicaSet (`kubectl rollout history`).
      const revision = newRs.metadata?.annotations?.[REVISION];
      if (revision && d.metadata?.annotations?.[REVISION] !== revision) {
        await this.client
          .api(Deployment, namespace)
          .patch(name, { metadata: { annotations: { [REVISION]: revision } } });
      }
      // Old ReplicaSets beyond the history limit go.
      const limit = d.spec?.revisionHistoryLimit ?? 10;
      const retired = old.filter((rs) => specReplicas(rs) === 0 && (rs.status?.replicas ?? 0) === 0);
      for (const rs of retired.slice(0, Math.max(0, retired.length - limit))) {
        try {
          await rsApi.delete(rs.metadata?.name ?? '', { preconditions: { uid: rs.metadata?.uid ?? '' } });
        } catch (err) {
          if (!isNotFound(err) && !isConflict(err)) throw err;
        }
      }
    }
    await this.writeStatus(d, owned, newRs, replicas, maxUnavailable);
  }

  private async writeStatus(
    d: Deployment,
    owned: ReplicaSet[],
    newRs: ReplicaSet | undefined,
    replicas: number,
    maxUnavailable: number,
  ): Promise<void> {
    const sum = (f: (rs: ReplicaSet) => number | undefined) => owned.reduce((n, rs) => n + (f(rs) ?? 0), 0);
    const available = sum((rs) => rs.status?.availableReplicas);
    const total = sum((rs) => rs.status?.replicas);
    const updated = newRs?.status?.replicas ?? 0;
    const complete =
      !!newRs &&
      updated === replicas &&
      total === replicas &&
      (newRs.status?.availableReplicas ?? 0) === replicas;
    const previous = new Map((d.status?.conditions ?? []).map((c) => [c.type, c]));
    const t = now();
    const condition = (
      type: string,
      status: 'True' | 'False',
      reason: string,
      message: string,
    ): Condition => {
      const old = previous.get(type);
      const same = old?.status === status && old.reason === reason && old.message === message;
      return {
        type,
        status,
        lastUpdateTime: same ? old.lastUpdateTime : t,
        lastTransitionTime: old?.status === status ? old.lastTransitionTime : t,
        reason,
        message,
      };
    };
    const rsName = newRs?.metadata?.name ?? '';
    const conditions = [
      available >= replicas - maxUnavailable
        ? condition('Available', 'True', 'MinimumReplicasAvailable', 'Deployment has minimum availability.')
        : condition(
            'Available',
            'False',
            'MinimumReplicasUnavailable',
            'Deployment does not have minimum availability.',
          ),
      complete
        ? condition(
            'Progressing',
            'True',
            'NewReplicaSetAvailable',
            `ReplicaSet "${rsName}" has successfully progressed.`,
          )
        : condition('Progressing', 'True', 'ReplicaSetUpdated', `ReplicaSet "${rsName}" is progressing.`),
    ];
    const status = {
      observedGeneration: d.metadata?.generation ?? 0,
      replicas: total,
      updatedReplicas: updated,
      readyReplicas: sum((rs) => rs.status?.readyReplicas),
      availableReplicas: available,
      ...(Math.max(0, replicas - available) > 0 && {
        unavailableReplicas: Math.max(0, replicas - available),
      }),
      conditions,
    };
    const cur = d.status ?? {};
    const comparable = (s: typeof cur) =>
      stableJson({
        ...s,
        unavailableReplicas: s.unavailableReplicas ?? 0,
        readyReplicas: s.readyReplicas ?? 0,
        availableReplicas: s.availableReplicas ?? 0,
        updatedReplicas: s.updatedReplicas ?? 0,
        replicas: s.replicas ?? 0,
        collisionCount: undefined,
        conditions: (s.conditions ?? []).map((c) => [c.type, c.status, c.reason, c.message]),
      });
    if (comparable(cur) === comparable(status)) return;
    try {
      await this.client.api(Deployment, d.metadata?.namespace).patchStatus(
        d.metadata?.name ?? '',
        [
          {
            op: 'replace',
            path: '/status',
            value: {
              ...status,
              ...(d.status?.collisionCount !== undefined && { collisionCount: d.status.collisionCount }),
            },
          },
        ],
        { type: 'json' },
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
