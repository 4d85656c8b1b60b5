import { ApiError } from 'kubeloop/api';
import { collectionPrefix } from '../storage/store.js';
import type { StoreEvent } from '../storage/types.js';
import { clone, isObject, type Obj } from '../util/object.js';
import type { RestStorage } from './rest.js';
import type { ResourceType } from './types.js';

export interface NamespaceControllerOptions {
  /** PEM of the cluster CA, published in every namespace as ConfigMap `kube-root-ca.crt`. */
  caCert: string;
  log?: (level: 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
}

/**
 * The namespace controllers of kube-controller-manager in one: the namespace lifecycle
 * (a terminating namespace is emptied, then its `kubernetes` finalizer removed so it goes
 * away), the service-account controller (a `default` ServiceAccount in every namespace) and the
 * root-CA publisher (`kube-root-ca.crt`).
 *
 * They run inside the API server on its storage, in every mode (also a bare server without the
 * built-in controllers), like the apiextensions controllers: the `default` ServiceAccount and
 * `kube-root-ca.crt` exist as soon as the namespace does, which clients and tests rely on.
 * Unlike a cluster without kube-controller-manager (envtest), a namespace deleted here is emptied
 * and goes away even with the built-in controllers off: tests create and delete namespaces
 * freely. It removes its `kubernetes` finalizer through `namespaces/finalize`, as kube's does.
 */
const RETRY_BASE_MS = 5;
const RETRY_MAX_MS = 1000;

export class NamespaceController {
  private readonly terminating = new Set<string>();
  private unsubscribe: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  /**
   * How long to wait before looking again at namespaces whose content remains: from 5 ms,
   * doubling up to 1 s (Kubernetes' namespace controller retries with a rate limiter from 5 ms),
   * so that a namespace emptied within moments goes within moments.
   */
  private retryDelayMs = RETRY_BASE_MS;
  private running = false;
  private stopped = false;

  constructor(
    private readonly rest: RestStorage,
    private readonly opts: NamespaceControllerOptions,
  ) {}

  start(): void {
    const store = this.rest.store;
    const prefix = collectionPrefix('', 'namespaces');
    const snapshot = store.list(prefix);
    for (const ns of snapshot.items) this.observe(ns.object as Obj);
    this.unsubscribe = store.watch(prefix, snapshot.revision, (ev: StoreEvent) => {
      if (ev.type !== 'DELETED') this.observe(ev.object.object as Obj);
    });
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    if (this.timer) clearTimeout(this.timer);
  }

  private observe(ns: Obj): void {
    const m = ns.metadata as Obj;
    const name = String(m.name);
    if (m.deletionTimestamp) {
      this.terminating.add(name);
      this.retryDelayMs = RETRY_BASE_MS;
      this.schedule(0);
    } else {
      void this.ensureContents(name);
    }
  }

  private schedule(delayMs: number): void {
    if (this.stopped || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.sync();
    }, delayMs);
    this.timer.unref();
  }

  private namespaceType(): ResourceType {
    return this.rest.registry.lookup('', 'v1', 'namespaces')!;
  }

  /** Creates the objects every namespace has (idempotently). */
  private async ensureContents(ns: string): Promise<void> {
    const reg = this.rest.registry;
    const wanted: Array<[ResourceType | undefined, Obj]> = [
      [
        reg.lookup('', 'v1', 'serviceaccounts'),
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'default' } },
      ],
      [
        reg.lookup('', 'v1', 'configmaps'),
        {
          apiVersion: 'v1',
          kind: 'ConfigMap',
          metadata: {
            name: 'kube-root-ca.crt',
            annotations: { 'kubernetes.io/description': ROOT_CA_DESCRIPTION },
          },
          data: { 'ca.crt': this.opts.caCert },
        },
      ],
    ];
    for (const [t, obj] of wanted) {
      if (!t || this.stopped) continue;
      const name = String((obj.metadata as Obj).name);
      if (this.rest.store.get(this.rest.key(t, ns, name))) continue;
      try {
        await this.rest.create(t, ns, clone(obj), { dryRun: false });
      } catch (err) {
        if (err instanceof ApiError && (err.code === 409 || err.code === 403 || err.code === 404)) continue;
        this.opts.log?.('warn', 'could not create namespace default object', {
          namespace: ns,
          name,
          err: String(err),
        });
      }
    }
  }

  /** Empties terminating namespaces; finalizes those that are empty. */
  private async sync(): Promise<void> {
    if (this.running || this.stopped) return;
    this.running = true;
    let pending = false;
    try {
      for (const ns of [...this.terminating]) {
        if (await this.drain(ns)) this.terminating.delete(ns);
        else pending = true;
      }
    } catch (err) {
      pending = true;
      this.opts.log?.('error', 'namespace controller sync failed', { err: String(err) });
    } finally {
      this.running = false;
    }
    if (pending) {
      this.schedule(this.retryDelayMs);
      this.retryDelayMs = Math.min(this.retryDelayMs * 2, RETRY_MAX_MS);
    } else this.retryDelayMs = RETRY_BASE_MS;
  }

  /**
   * Deletes what is left in `ns` and reports progress in its conditions (`deleteAllContent`);
   * returns true once the namespace is finalized.
   */
  private async drain(ns: string): Promise<boolean> {
    const nsType = this.namespaceType();
    const current = this.rest.store.get(this.rest.key(nsType, undefined, ns));
    if (!current) return true;
    const remaining = new Map<string, number>();
    const finalizers = new Map<string, number>();
    const errors: string[] = [];
    // One version of each resource: the registry serves some at several.
    const seen = new Set<string>();
    for (const t of this.rest.registry.all()) {
      if (!t.namespaced || !t.verbs.includes('delete')) continue;
      const gr = `${t.resource}.${t.group}`;
      if (seen.has(gr)) continue;
      seen.add(gr);
      const { items } = this.rest.list(t, ns, {});
      for (const item of items) {
        const m = item.object.metadata as Obj;
        if (m.deletionTimestamp) continue;
        try {
          await this.rest.delete(t, ns, String(m.name), {}, { dryRun: false });
        } catch (err) {
          if (err instanceof ApiError && (err.code === 404 || err.code === 409)) continue;
          errors.push(err instanceof Error ? err.message : String(err));
        }
      }
      // What is still there after the deletes: graceful pods, objects held by finalizers.
      for (const item of this.rest.list(t, ns, {}).items) {
        remaining.set(gr, (remaining.get(gr) ?? 0) + 1);
        const fs = (item.object.metadata as Obj).finalizers;
        if (Array.isArray(fs))
          for (const f of fs) finalizers.set(String(f), (finalizers.get(String(f)) ?? 0) + 1);
      }
    }
    const failures: Partial<Record<ConditionType, [reason: string, message: string]>> = {};
    if (errors.length > 0)
      failures.NamespaceDeletionContentFailure = [
        'ContentDeletionFailed',
        errors.length === 1 ? (errors[0] ?? '') : `[${errors.join(', ')}]`,
      ];
    if (remaining.size > 0)
      failures.NamespaceContentRemaining = [
        'SomeResourcesRemain',
        `Some resources are remaining: ${[...remaining]
          .map(([gr, n]) => `${gr} has ${n} resource instances`)
          .sort()
          .join(', ')}`,
      ];
    if (finalizers.size > 0)
      failures.NamespaceFinalizersRemaining = [
        'SomeFinalizersRemain',
        `Some content in the namespace has finalizers remaining: ${[...finalizers]
          .map(([f, n]) => `${f} in ${n} resource instances`)
          .sort()
          .join(', ')}`,
      ];
    await this.writeConditions(nsType, ns, current.object as Obj, failures);
    if (remaining.size > 0 || errors.length > 0) return false;
    try {
      await this.rest.patch(nsType, undefined, ns, 'finalize', { dryRun: false }, (cur) => {
        const next = clone(cur) as Obj;
        if (isObject(next.spec) && Array.isArray(next.spec.finalizers)) {
          next.spec.finalizers = next.spec.finalizers.filter((f) => f !== 'kubernetes');
        }
        return next;
      });
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return true;
      throw err;
    }
    return true;
  }

  /**
   * The deletion conditions of a terminating namespace (`namespaceConditionUpdater.Update`):
   * every type, in Kubernetes' order, True with the failure found or False with its "ok" text;
   * a condition that did not change keeps its time.
   */
  private async writeConditions(
    nsType: ResourceType,
    ns: string,
    current: Obj,
    failures: Partial<Record<ConditionType, [string, string]>>,
  ): Promise<void> {
    const old = (
      isObject(current.status) && Array.isArray(current.status.conditions) ? current.status.conditions : []
    ) as Obj[];
    const t = `${new Date().toISOString().slice(0, 19)}Z`;
    const conditions = CONDITION_TYPES.map((type) => {
      const failure = failures[type];
      const [status, reason, message] = failure ? ['True', ...failure] : ['False', ...OK[type]];
      const prev = old.find((c) => c.type === type);
      if (prev && prev.status === status && prev.reason === reason && prev.message === message) return prev;
      return {
        type,
        status,
        lastTransitionTime: prev && prev.status === status ? prev.lastTransitionTime : t,
        reason,
        message,
      };
    });
    if (JSON.stringify(conditions) === JSON.stringify(old)) return;
    try {
      await this.rest.patch(nsType, undefined, ns, 'status', { dryRun: false }, (cur) => {
        const next = clone(cur) as Obj;
        next.status = { ...(isObject(next.status) ? next.status : {}), conditions };
        return next;
      });
    } catch (err) {
      if (!(err instanceof ApiError && (err.code === 404 || err.code === 409))) throw err;
    }
  }
}

type ConditionType =
  | 'NamespaceDeletionDiscoveryFailure'
  | 'NamespaceDeletionGroupVersionParsingFailure'
  | 'NamespaceDeletionContentFailure'
  | 'NamespaceContentRemaining'
  | 'NamespaceFinalizersRemaining';

/** The namespace deletion conditions, in the order Kubernetes writes them. */
const CONDITION_TYPES: readonly ConditionType[] = [
  'NamespaceDeletionDiscoveryFailure',
  'NamespaceDeletionGroupVersionParsingFailure',
  'NamespaceDeletionContentFailure',
  'NamespaceContentRemaining',
  'NamespaceFinalizersRemaining',
];

/** Reason and message of each condition when all is well (`okReasons`, `okMessages`). */
const OK: Record<ConditionType, [string, string]> = {
  NamespaceDeletionDiscoveryFailure: ['ResourcesDiscovered', 'All resources successfully discovered'],
  NamespaceDeletionGroupVersionParsingFailure: [
    'ParsedGroupVersions',
    'All legacy kube types successfully parsed',
  ],
  NamespaceDeletionContentFailure: [
    'ContentDeleted',
    'All content successfully deleted, may be waiting on finalization',
  ],
  NamespaceContentRemaining: ['ContentRemoved', 'All content successfully removed'],
  NamespaceFinalizersRemaining: ['ContentHasNoFinalizers', 'All content-preserving finalizers finished'],
};

const ROOT_CA_DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.';
