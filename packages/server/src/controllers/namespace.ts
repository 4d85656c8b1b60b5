import { ApiError } from 'kubeloop/api';
import type { RestStorage } from '../registry/rest.js';
import type { ResourceType } from '../registry/types.js';
import { collectionPrefix } from '../storage/store.js';
import type { StoreEvent } from '../storage/types.js';
import { clone, isObject, type Obj } from '../util/object.js';

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
 * These will move onto `kubeloop/runtime` informers once the SDK has them; they only use the
 * registry's public REST semantics, exactly as an external controller would.
 */
export class NamespaceController {
  private readonly terminating = new Set<string>();
  private unsubscribe: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
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
    if (pending) this.schedule(50);
  }

  /** Deletes what is left in `ns`; returns true once the namespace is finalized. */
  private async drain(ns: string): Promise<boolean> {
    const nsType = this.namespaceType();
    const current = this.rest.store.get(this.rest.key(nsType, undefined, ns));
    if (!current) return true;
    let remaining = 0;
    for (const t of this.rest.registry.all()) {
      if (!t.namespaced || !t.verbs.includes('delete')) continue;
      const { items } = this.rest.list(t, ns, {});
      for (const item of items) {
        remaining++;
        const m = item.object.metadata as Obj;
        if (m.deletionTimestamp) continue;
        try {
          await this.rest.delete(t, ns, String(m.name), {}, { dryRun: false });
        } catch (err) {
          if (!(err instanceof ApiError && (err.code === 404 || err.code === 409))) throw err;
        }
      }
    }
    if (remaining > 0) return false;
    const next = clone(current.object) as Obj;
    if (isObject(next.spec) && Array.isArray(next.spec.finalizers)) {
      next.spec.finalizers = next.spec.finalizers.filter((f) => f !== 'kubernetes');
    }
    try {
      await this.rest.patch(nsType, undefined, ns, undefined, { dryRun: false }, () => next);
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return true;
      throw err;
    }
    return true;
  }
}

const ROOT_CA_DESCRIPTION =
  'Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of Kubernetes clusters.';
