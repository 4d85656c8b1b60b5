/**
 * The controller builder (controller-runtime's `builder`): name the reconciled kind, the kinds
 * it owns and watches, filters, scope and concurrency; end with the reconcile function.
 */
import type { Client } from '../../client/client.js';
import type { ResourceDescriptor } from '../../client/descriptor.js';
import type { LabelSelectorInput } from '../../client/options.js';
import type { KubeObject } from '../../client/types.js';
import type { ControllerPermissions, PolicyRule } from '../../manifests/rbac.js';
import type { IndexFunc } from '../cache/store.js';
import type { PartialObjectMetadata } from '../cache/transform.js';
import type { Clock } from '../clock.js';
import type { RateLimiter } from '../workqueue/rate-limiter.js';
import type { Predicate } from './predicates.js';
import type { CacheLister, GoneFn, ReconcileFn, ReconcileRequest } from './types.js';

/**
 * Maps an object of a watched kind to the requests it should trigger; `cache` reads the
 * manager's cache as it is now (e.g. the objects whose selector matches `obj`).
 *
 * @example
 * ```ts
 * const bySecret: MapFn<Secret> = (s) => [{ namespace: s.metadata!.namespace!, name: s.metadata!.labels!.app! }];
 * const byUse: MapFn<Secret> = (s, cache) =>
 *   cache.list(Foo, { namespace: s.metadata!.namespace!, fieldSelector: { 'spec.secretName': s.metadata!.name! } })
 *     .map((f) => ({ namespace: f.metadata!.namespace!, name: f.metadata!.name! }));
 * ```
 */
export type MapFn<W> = (obj: W, cache: CacheLister) => readonly ReconcileRequest[];

/** A watched kind beside the primary one. @internal shape, read by the manager. */
export interface WatchSpec {
  readonly kind: ResourceDescriptor;
  /** `owns`: enqueue the controller owner of the primary kind; `watches`: the mapping function. */
  readonly relation: 'owns' | 'watches';
  readonly map?: MapFn<KubeObject>;
  readonly predicates: readonly Predicate[];
  readonly labelSelector?: LabelSelectorInput;
  /** Watched through the shared metadata-only informer of the kind (`watchesMetadata`). */
  readonly metadataOnly?: boolean;
}

/**
 * A field index on the manager's cache (controller-runtime's `IndexField`): lists of the
 * kind may then select on `field` (`cache.list(Pod, { fieldSelector: { 'spec.nodeName': n } })`)
 * from an index instead of a scan.
 */
export interface FieldIndex {
  readonly kind: ResourceDescriptor;
  readonly field: string;
  readonly extract: IndexFunc<KubeObject>;
}

/**
 * Tuning of a controller.
 *
 * @example
 * ```ts
 * controller(Foo).withOptions({ maxConcurrentReconciles: 4, reconcileTimeoutMs: 60_000 })
 * ```
 */
export interface ControllerOptions {
  /** Reconciles running at once (default 1). One key is never reconciled twice at once. */
  maxConcurrentReconciles?: number;
  /** Aborts (and retries) a reconcile that runs longer (default: no limit). */
  reconcileTimeoutMs?: number;
  /** Backoff of failed keys (default `defaultControllerRateLimiter()`). */
  rateLimiter?: RateLimiter<string>;
  /**
   * The clock of the controller's queue: `requeueAfter` and backoffs wait on it (default the
   * real clock). A test of a time-driven controller (a schedule, a stabilization window) passes a
   * `FakeClock` and moves it instead of waiting.
   */
  clock?: Clock;
  /**
   * The client this controller's reconciles (`ctx.client`) write with, in place of the
   * manager's: a controller that acts under its own identity while sharing the manager's
   * cache, as kube-controller-manager's controllers do with `--use-service-account-credentials`
   * (their informers list and watch as the manager, each writes as its own ServiceAccount).
   * Its writes are tracked for read-your-writes like the manager's.
   */
  client?: Client;
}

/**
 * A finished controller: give it to `Manager.add()`. Also carries the RBAC rules it needs
 * (`permissions`) for `kubeloop/manifests`.
 *
 * @example
 * ```ts
 * rbacManifests({ controllers: [fooController.permissions] }, names);
 * ```
 */
export interface ControllerDefinition<T extends KubeObject = KubeObject> {
  readonly name: string;
  readonly kind: ResourceDescriptor<T>;
  readonly predicates: readonly Predicate<T>[];
  readonly watches: readonly WatchSpec[];
  /** Namespace the controller's informers watch (`''`: all). */
  readonly namespace: string;
  readonly labelSelector?: LabelSelectorInput;
  readonly options: Readonly<ControllerOptions>;
  readonly reconcileFn: ReconcileFn<T>;
  readonly goneFn?: GoneFn<T>;
  /** Field indexes the controller reads by; the manager adds them to its cache. */
  readonly indexes: readonly FieldIndex[];
  readonly permissions: ControllerPermissions;
}

interface State<T extends KubeObject> {
  name?: string;
  kind: ResourceDescriptor<T>;
  predicates: Predicate<T>[];
  watches: WatchSpec[];
  namespace: string;
  labelSelector?: LabelSelectorInput;
  options: ControllerOptions;
  goneFn?: GoneFn<T>;
  indexes: FieldIndex[];
  extraRules: PolicyRule[];
}

/**
 * Builds a controller step by step; every step returns a new builder (a builder can be
 * shared as a template).
 */
export class ControllerBuilder<T extends KubeObject> {
  /** @internal use {@link controller}. */
  constructor(private readonly state: State<T>) {}

  private with(patch: Partial<State<T>>): ControllerBuilder<T> {
    return new ControllerBuilder({ ...this.state, ...patch });
  }

  /** The controller's name in logs and metrics (default: the kind, lowercased). */
  named(name: string): ControllerBuilder<T> {
    return this.with({ name });
  }

  /**
   * Children the controller creates with a controller owner reference to the primary object:
   * a change or deletion of a child reconciles its owner.
   */
  owns<C extends KubeObject>(
    kind: ResourceDescriptor<C>,
    options: { predicates?: Predicate<C>[] } = {},
  ): ControllerBuilder<T> {
    const spec: WatchSpec = { kind, relation: 'owns', predicates: (options.predicates ?? []) as Predicate[] };
    return this.with({ watches: [...this.state.watches, spec] });
  }

  /**
   * Any other kind, mapped to requests by `map` (e.g. the Foos that reference a Secret).
   *
   * @example
   * ```ts
   * controller(Foo).watches(Secret, (s) => foosUsing(s).map((f) => ({ namespace: f.ns, name: f.name })))
   * ```
   */
  watches<W extends KubeObject>(
    kind: ResourceDescriptor<W>,
    map: MapFn<W>,
    options: { predicates?: Predicate<W>[]; labelSelector?: LabelSelectorInput } = {},
  ): ControllerBuilder<T> {
    const spec: WatchSpec = {
      kind,
      relation: 'watches',
      map: map as MapFn<KubeObject>,
      predicates: (options.predicates ?? []) as Predicate[],
      ...(options.labelSelector !== undefined && { labelSelector: options.labelSelector }),
    };
    return this.with({ watches: [...this.state.watches, spec] });
  }

  /**
   * Another kind watched through its shared metadata-only informer (controller-runtime's
   * `WatchesMetadata`): the map function sees `PartialObjectMetadata` (names, labels,
   * annotations, owners), and the cache holds no more than that of each object — for kinds the
   * controller only needs the labels of, such as a Node's zone. Read them in the reconcile with
   * `cache.getMetadata`.
   *
   * @example
   * ```ts
   * controller(Service)
   *   .watchesMetadata(Node, (n) => servicesWithPodsOn(n.metadata.name), {
   *     predicates: [{ update: (o, n) => o.metadata.labels?.[ZONE] !== n.metadata.labels?.[ZONE] }],
   *   })
   *   .reconcile(async (svc, { cache }) => {
   *     const node = await cache.getMetadata(Node, 'node-1');
   *   });
   * ```
   */
  watchesMetadata(
    kind: ResourceDescriptor,
    map: MapFn<PartialObjectMetadata>,
    options: { predicates?: Predicate<PartialObjectMetadata>[]; labelSelector?: LabelSelectorInput } = {},
  ): ControllerBuilder<T> {
    const spec: WatchSpec = {
      kind,
      relation: 'watches',
      map: map as unknown as MapFn<KubeObject>,
      predicates: (options.predicates ?? []) as unknown as Predicate[],
      metadataOnly: true,
      ...(options.labelSelector !== undefined && { labelSelector: options.labelSelector }),
    };
    return this.with({ watches: [...this.state.watches, spec] });
  }

  /** Filters of the primary kind's events (all must pass). */
  withPredicates(...predicates: Predicate<T>[]): ControllerBuilder<T> {
    return this.with({ predicates: [...this.state.predicates, ...predicates] });
  }

  /** Watches one namespace only (every kind of the controller). */
  inNamespace(namespace: string): ControllerBuilder<T> {
    return this.with({ namespace });
  }

  /** Reconciles only primary objects matching the selector. */
  withLabelSelector(labelSelector: LabelSelectorInput): ControllerBuilder<T> {
    return this.with({ labelSelector });
  }

  /** Concurrency, timeout, backoff. */
  withOptions(options: ControllerOptions): ControllerBuilder<T> {
    return this.with({ options: { ...this.state.options, ...options } });
  }

  /** What the reconcile does beyond its kinds (reading Secrets, …), for the generated RBAC. */
  needs(...rules: PolicyRule[]): ControllerBuilder<T> {
    return this.with({ extraRules: [...this.state.extraRules, ...rules] });
  }

  /**
   * Called with the key, and the object's last state when the controller saw it deleted, when
   * the object is gone (rarely needed: prefer finalizers).
   */
  onGone(fn: GoneFn<T>): ControllerBuilder<T> {
    return this.with({ goneFn: fn });
  }

  /**
   * Indexes `field` of a kind in the manager's cache, so that the reconcile lists by it from the
   * index (controller-runtime's `mgr.GetFieldIndexer().IndexField`). Controllers that index the
   * same field of the same kind must extract it the same way; the first index wins.
   *
   * @example
   * ```ts
   * controller(ReplicaSet)
   *   .owns(Pod)
   *   .indexField(Pod, 'metadata.controllerUID', (p) => controllerOf(p)?.uid)
   *   .reconcile(async (rs, { cache }) => {
   *     const mine = await cache.list(Pod, { fieldSelector: { 'metadata.controllerUID': rs.metadata!.uid! } });
   *   });
   * ```
   */
  indexField<K extends KubeObject>(
    kind: ResourceDescriptor<K>,
    field: string,
    extract: IndexFunc<K>,
  ): ControllerBuilder<T> {
    const index: FieldIndex = { kind, field, extract: extract as IndexFunc<KubeObject> };
    return this.with({ indexes: [...this.state.indexes, index] });
  }

  /** The reconcile function; finishes the controller. */
  reconcile(fn: ReconcileFn<T>): ControllerDefinition<T> {
    const s = this.state;
    const owns = s.watches.filter((w) => w.relation === 'owns').map((w) => w.kind);
    const watches = s.watches.filter((w) => w.relation === 'watches').map((w) => w.kind);
    return Object.freeze({
      name: s.name ?? s.kind.kind.toLowerCase(),
      kind: s.kind,
      predicates: s.predicates,
      watches: s.watches,
      namespace: s.namespace,
      ...(s.labelSelector !== undefined && { labelSelector: s.labelSelector }),
      options: s.options,
      reconcileFn: fn,
      ...(s.goneFn && { goneFn: s.goneFn }),
      indexes: s.indexes,
      permissions: {
        for: s.kind,
        ...(owns.length > 0 && { owns }),
        ...(watches.length > 0 && { watches }),
        ...(s.extraRules.length > 0 && { extraRules: s.extraRules }),
      },
    });
  }
}

/**
 * Starts a controller of a kind.
 *
 * @example
 * ```ts
 * export const fooController = controller(Foo)
 *   .owns(Deployment)
 *   .reconcile(async (foo, { client }) => {
 *     await client.apply(deploymentFor(foo), { fieldManager: 'foo-controller' });
 *   });
 * ```
 */
export function controller<T extends KubeObject>(kind: ResourceDescriptor<T>): ControllerBuilder<T> {
  return new ControllerBuilder<T>({
    kind,
    predicates: [],
    watches: [],
    namespace: '',
    options: {},
    indexes: [],
    extraRules: [],
  });
}
