/**
 * A running controller: informers feed a rate-limited workqueue of keys; workers reconcile
 * them (client-go's sample-controller loop, controller-runtime's `controller`).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Client } from '../../client/client.js';
import { parseApiVersion } from '../../client/descriptor.js';
import type { KubeObject } from '../../client/types.js';
import { settlesWithin } from '../../util/settles-within.js';
import type { EventHandler, Informer } from '../cache/informer.js';
import { objectKey, splitKey } from '../keys.js';
import type { ManagerCache } from '../manager/cache.js';
import type { EventRecorder } from '../manager/events.js';
import type { WorkQueueMetrics } from '../workqueue/metrics.js';
import { WorkQueue } from '../workqueue/queue.js';
import type { ControllerDefinition, WatchSpec } from './builder.js';
import { isPanic, isTerminalError, ReconcileTimeoutError } from './errors.js';
import type { ControllerMetrics, ReconcileOutcome } from './metrics.js';
import { allow } from './predicates.js';
import type { ReconcileContext, Reconciled, ReconcileRequest } from './types.js';

/** What a controller borrows from its manager. @internal */
export interface ControllerDeps {
  client: Client;
  /** A client whose reads are not cached (namespace scope discovery). */
  rawClient: Client;
  cache: ManagerCache;
  events: EventRecorder;
  log: Logger;
  /** What to declare for a 403 the reconcile failed with (see manager/permissions.ts). */
  hintFor?(err: unknown): string | undefined;
  metrics: ControllerMetrics;
  queueMetrics: WorkQueueMetrics;
  /** The manager's default for controllers that do not set `maxConcurrentReconciles`. */
  maxConcurrentReconciles?: number;
}

const keyOf = (r: ReconcileRequest) => (r.namespace ? `${r.namespace}/${r.name}` : r.name);

/**
 * One controller of a manager. Made by the manager from a {@link ControllerDefinition}.
 */
export class Controller<T extends KubeObject = KubeObject> {
  readonly name: string;
  private primary: Informer<T> | undefined;
  private secondary: { spec: WatchSpec; informer: Informer<KubeObject> }[] = [];
  private queue: WorkQueue<string> | undefined;
  private removers: (() => void)[] = [];
  private workers: Promise<void>[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private hardStop = new AbortController();
  /**
   * How to abort each running reconcile: the hard stop calls them from its one listener, where a
   * listener per reconcile on the hard stop's signal (and one on the reconcile's own) cost ~3 %
   * of the sample operator's CPU (Node's EventTarget is slow to add to and remove from).
   */
  private readonly aborts = new Set<(reason: unknown) => void>();
  private ownerNamespaced = true;
  private readonly maxConcurrent: number;
  /** The last state of deleted primary objects, for `onGone`, until their key is reconciled. */
  private readonly lastStates = new Map<string, T>();

  constructor(
    readonly definition: ControllerDefinition<T>,
    private readonly deps: ControllerDeps,
  ) {
    this.name = definition.name;
    this.maxConcurrent = Math.max(
      1,
      definition.options.maxConcurrentReconciles ?? deps.maxConcurrentReconciles ?? 1,
    );
  }

  /** Number of reconciles running now. */
  get active(): number {
    return this.inFlight.size;
  }

  /** Makes the informers (so that the manager's cache sync covers them). */
  async prepare(): Promise<void> {
    const d = this.definition;
    this.ownerNamespaced = (await this.deps.rawClient.resolve(d.kind)).namespaced;
    this.primary = this.deps.cache.informer(d.kind, {
      namespace: d.namespace,
      ...(d.labelSelector !== undefined && { labelSelector: d.labelSelector }),
    });
    this.secondary = d.watches.map((spec) => {
      const scope = {
        namespace: d.namespace,
        ...(spec.labelSelector !== undefined && { labelSelector: spec.labelSelector }),
      };
      const informer = spec.metadataOnly
        ? (this.deps.cache.metadataInformer(spec.kind, scope) as unknown as Informer<KubeObject>)
        : this.deps.cache.informer(spec.kind, scope);
      return { spec, informer };
    });
  }

  /** Starts the workers and the event handlers (the cache is already synced). */
  start(): void {
    if (!this.primary) throw new Error(`controller ${this.name}: prepare() first`);
    const d = this.definition;
    const queue = new WorkQueue<string>({
      name: this.name,
      metrics: this.deps.queueMetrics,
      ...(d.options.rateLimiter && { rateLimiter: d.options.rateLimiter }),
      ...(d.options.clock && { clock: d.options.clock }),
    });
    this.queue = queue;
    const hardStop = new AbortController();
    this.hardStop = hardStop;
    hardStop.signal.addEventListener(
      'abort',
      () => {
        for (const abort of this.aborts) abort(hardStop.signal.reason);
      },
      { once: true },
    );
    this.deps.metrics.initialize(this.name);
    this.deps.metrics.maxConcurrent.set({ controller: this.name }, this.maxConcurrent);
    const add = (obj: KubeObject) => queue.add(objectKey(obj));
    const ps = d.predicates;
    const remember = d.goneFn !== undefined;
    this.removers.push(
      this.primary.addEventHandler({
        onAdd: (o) => allow(ps, { type: 'create', obj: o }) && add(o),
        onUpdate: (old, o) => allow(ps, { type: 'update', oldObj: old, obj: o }) && add(o),
        onDelete: (o) => {
          if (!allow(ps, { type: 'delete', obj: o })) return;
          if (remember) this.lastStates.set(objectKey(o), o);
          add(o);
        },
      }),
    );
    for (const { spec, informer } of this.secondary) {
      const enqueue =
        spec.relation === 'owns'
          ? (o: KubeObject) => {
              const owner = this.ownerOf(o);
              if (owner) queue.add(keyOf(owner));
            }
          : (o: KubeObject) => {
              for (const r of spec.map?.(o, this.deps.cache.lister) ?? []) queue.add(keyOf(r));
            };
      const handler: EventHandler<KubeObject> = {
        onAdd: (o) => allow(spec.predicates, { type: 'create', obj: o }) && enqueue(o),
        onUpdate: (old, o) => {
          if (!allow(spec.predicates, { type: 'update', oldObj: old, obj: o })) return;
          // The owner may have changed: both the old and the new one hear about it.
          enqueue(old);
          enqueue(o);
        },
        onDelete: (o) => allow(spec.predicates, { type: 'delete', obj: o }) && enqueue(o),
      };
      this.removers.push(informer.addEventHandler(handler));
    }
    this.workers = Array.from({ length: this.maxConcurrent }, () => this.work(queue));
  }

  /**
   * Stops taking work; lets running reconciles finish for up to `graceMs` (0: abort them at
   * once), then aborts them; resolves when every worker is done.
   */
  async stop(graceMs: number): Promise<void> {
    for (const remove of this.removers) remove();
    this.removers = [];
    const queue = this.queue;
    if (!queue) return;
    void queue.shutdown();
    if (graceMs > 0 && this.inFlight.size > 0) await settlesWithin(Promise.all(this.inFlight), graceMs);
    this.hardStop.abort(new Error(`controller ${this.name} stopped`));
    await Promise.all(this.workers);
    this.workers = [];
    this.queue = undefined;
    this.lastStates.clear();
  }

  private ownerOf(o: KubeObject): ReconcileRequest | undefined {
    const { group, kind } = this.definition.kind;
    for (const ref of o.metadata?.ownerReferences ?? []) {
      if (!ref.controller || ref.kind !== kind || parseApiVersion(ref.apiVersion).group !== group) continue;
      return { namespace: this.ownerNamespaced ? (o.metadata?.namespace ?? '') : '', name: ref.name };
    }
    return undefined;
  }

  private async work(queue: WorkQueue<string>): Promise<void> {
    for (;;) {
      const key = await queue.get(this.hardStop.signal);
      if (key === undefined) return;
      const run = this.process(queue, key);
      this.inFlight.add(run);
      try {
        await run;
      } finally {
        this.inFlight.delete(run);
        queue.done(key);
      }
    }
  }

  private async process(queue: WorkQueue<string>, key: string): Promise<void> {
    const d = this.definition;
    const { metrics } = this.deps;
    const controller = this.name;
    const request = splitKey(key);
    const reconcileID = randomUUID();
    // The reconcile's logger is made when it first logs: a child logger costs ~10 µs (pino
    // serialises its bindings), and most reconciles of a settled object log nothing.
    let child: Logger | undefined;
    const log = () =>
      (child ??= this.deps.log.child({
        controller,
        kind: d.kind.kind,
        namespace: request.namespace,
        name: request.name,
        reconcileID,
      }));
    // The reconcile's signal is made when someone asks for it (or it aborts): making an
    // AbortSignal cost ~1 % of a busy operator's CPU, and most reconciles never look at it.
    let ac: AbortController | undefined;
    const signal = () => {
      ac ??= new AbortController();
      return ac.signal;
    };
    let fail: (reason: unknown) => void = () => undefined;
    /** Rejects once the reconcile is aborted (stop or timeout): the reconcile is raced against it. */
    const stopped = new Promise<never>((_, reject) => {
      fail = reject;
    });
    stopped.catch(() => undefined);
    // Aborts the reconcile's signal and the race, with the first reason given.
    const abort = (reason: unknown) => {
      const s = signal();
      ac?.abort(reason);
      fail(s.reason);
    };
    this.aborts.add(abort);
    const timeoutMs = d.options.reconcileTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    const started = performance.now();
    metrics.activeWorkers.inc({ controller });
    let outcome: ReconcileOutcome = 'success';
    try {
      if (timeoutMs !== undefined) {
        timer = setTimeout(() => abort(new ReconcileTimeoutError(timeoutMs)), timeoutMs);
      }
      const attempt = async (): Promise<Reconciled> => {
        if (!this.primary) return undefined;
        const obj = await this.deps.cache.read(this.primary, d.kind, request.namespace, request.name, signal);
        const ctx: ReconcileContext = {
          client: this.deps.client,
          cache: this.deps.cache,
          get log() {
            return log();
          },
          events: this.deps.events.forObject(
            obj ?? { apiVersion: '', kind: d.kind.kind, metadata: { ...request } },
          ),
          get signal() {
            return signal();
          },
          request,
          reconcileID,
          controller,
        };
        const last = this.lastStates.get(key);
        if (obj !== undefined) {
          if (last !== undefined) this.lastStates.delete(key);
          return d.reconcileFn(obj, ctx);
        }
        const result = await d.goneFn?.(request, ctx, last);
        // Kept for a retry until the gone handler succeeds (unless a newer deletion replaced it).
        if (last !== undefined && this.lastStates.get(key) === last) this.lastStates.delete(key);
        return result;
      };
      const running = attempt();
      running.catch(() => undefined);
      const result = await Promise.race([running, stopped]);
      if (this.hardStop.signal.aborted) return;
      if (result && result.requeueAfter !== undefined) {
        outcome = 'requeue_after';
        queue.forget(key);
        queue.addAfter(key, Math.max(0, result.requeueAfter));
      } else if (result?.requeue) {
        outcome = 'requeue';
        queue.addRateLimited(key);
      } else {
        queue.forget(key);
      }
    } catch (err) {
      if (this.hardStop.signal.aborted) return;
      outcome = 'error';
      metrics.reconcileErrors.inc({ controller });
      if (isTerminalError(err)) {
        metrics.terminalErrors.inc({ controller });
        log().error({ err }, 'terminal reconcile error, not retrying');
        queue.forget(key);
      } else {
        if (isPanic(err)) {
          metrics.panics.inc({ controller });
          log().error({ err }, 'reconcile threw an exception');
        } else {
          const hint = this.deps.hintFor?.(err);
          log().error({ err, ...(hint !== undefined && { hint }) }, 'reconcile failed');
        }
        queue.addRateLimited(key);
      }
    } finally {
      clearTimeout(timer);
      this.aborts.delete(abort);
      metrics.activeWorkers.dec({ controller });
      if (!this.hardStop.signal.aborted) {
        metrics.reconcileTotal.inc({ controller, result: outcome });
        metrics.reconcileTime.observe({ controller }, (performance.now() - started) / 1000);
      }
    }
  }
}
