/**
 * The manager (controller-runtime's `manager`): one client, one shared cache, the controllers,
 * leader election, probes and metrics, events, and a graceful shutdown.
 */
import { setMaxListeners } from 'node:events';
import type { Server } from 'node:http';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { Client } from '../../client/client.js';
import type { ResourceDescriptor } from '../../client/descriptor.js';
import { ClientMetrics } from '../../client/transport/metrics.js';
import type { KubeObject } from '../../client/types.js';
import type { ManagerPermissions } from '../../manifests/rbac.js';
import { InformerFactory } from '../cache/factory.js';
import type { IndexFunc } from '../cache/store.js';
import type { ControllerDefinition, FieldIndex } from '../controller/builder.js';
import { Controller } from '../controller/controller.js';
import { ControllerMetrics } from '../controller/metrics.js';
import type { CacheReader } from '../controller/types.js';
import { Gauge, Registry } from '../prom-client.js';
import { Sharding, type ShardingOptions } from '../sharding/sharding.js';
import { WorkQueueMetrics } from '../workqueue/metrics.js';
import { ManagerCache } from './cache.js';
import { EventRecorder } from './events.js';
import { closeServer, type Endpoints, serveEndpoints } from './http.js';
import { type LeaderElectionOptions, LeaderElector } from './leader-election.js';
import { defaultLogger } from './logger.js';
import { PermissionMonitor } from './permissions.js';
import { WriteTracker } from './read-your-writes.js';
import { trackingClient } from './tracking-client.js';
import { capYoungGeneration } from './young-generation.js';

/**
 * Options of a {@link Manager}. Every one has a production default.
 *
 * @example
 * ```ts
 * new Manager({ leaderElection: { id: 'foo-operator' }, metricsAddress: ':8080', healthProbeAddress: ':8081' });
 * ```
 */
export interface ManagerOptions {
  /** The client (default `Client.load()`, with its request metrics on `/metrics`). */
  client?: Client;
  /** Request metrics of a client you pass, to show on `/metrics`. */
  clientMetrics?: ClientMetrics;
  /** The logger (default: pino at `info`, or `LOG_LEVEL`, writing to stdout synchronously). */
  logger?: Logger;
  /** The namespace the cache watches (default `''`: all). */
  namespace?: string;
  /** Leader election (default: none — every replica reconciles). */
  leaderElection?: LeaderElectionOptions;
  /** Address of `/healthz` and `/readyz` (default `:8081`; `false`: none). */
  healthProbeAddress?: string | false;
  /** Address of `/metrics` (default `:8080`; `false`: none). May equal the probes'. */
  metricsAddress?: string | false;
  /** How long a shutdown waits for running reconciles, then unwritten events (default 30 000 ms in all). */
  gracefulShutdownTimeoutMs?: number;
  /** How long the start waits for the caches to sync (default 120 000 ms). */
  cacheSyncTimeoutMs?: number;
  /** How long a cache read waits for the manager's own write before asking the server (default 10 000 ms). */
  readYourWritesTimeoutMs?: number;
  /** Stop gracefully on SIGTERM and SIGINT (default true). */
  handleSignals?: boolean;
  /** `reportingController` of Events (default: the leader election id, else `kubeloop-manager`). */
  name?: string;
  /** Where metrics are registered (default: a registry of the manager's own). */
  registry?: Registry;
  /**
   * Reconciles running at once in each controller that does not set its own
   * `maxConcurrentReconciles` (default 1): controller-runtime's manager-wide
   * `Controller.MaxConcurrentReconciles`, so that an operator's entry point can size its workers
   * (client-go's sample-controller runs 2) without touching the controllers.
   */
  maxConcurrentReconciles?: number;
  /**
   * Shards the controllers over the replicas (see `runtime/sharding`): each replica reconciles
   * only the objects labeled with its shard; instead of leader election, not with it.
   */
  sharding?: ShardingOptions;
  /**
   * Once started, V8's young generation stops growing at this size in MB (e.g. 4): informer
   * caches make it grow to its maximum (32 MB in Node 20) and keep it, mostly empty
   * (`young-generation.ts`). Off by default (`false`): the cap changes a V8 flag for the whole
   * process, which an operator's own `main` may choose but a library must not impose on the
   * process it runs in (a test runner, an app embedding the manager). Loading the modules alone
   * grows it to 16 MB before any manager exists: an entry point that calls `capYoungGeneration`
   * of `kubeloop/young-generation` and then imports the rest keeps it at the cap from the start
   * (as the sample operator's main.ts), or `node --max-semi-space-size=2 dist/main.js`.
   */
  youngGenerationLimitMb?: number | false;
}

/**
 * What a {@link Runnable} gets from its manager: the manager's client (writes tracked for
 * read-your-writes), its shared cache, its event recorder and logger.
 */
export interface RunnableSetup {
  readonly client: Client;
  readonly cache: ManagerCache;
  readonly events: EventRecorder;
  readonly log: Logger;
}

/** A {@link RunnableSetup} while running, with the signal that aborts when the manager stops. */
export interface RunnableContext extends RunnableSetup {
  readonly signal: AbortSignal;
}

/**
 * Work a manager runs beside its controllers (controller-runtime's `Runnable`): a loop that is
 * not a reconcile of one kind — a heartbeat, a garbage collector over every kind, a cache
 * warmer. It shares the manager's client and cache, starts once the caches synced (and, unless
 * `needLeaderElection` is false, once the manager leads), and stops with the manager.
 *
 * @example
 * ```ts
 * manager.add({
 *   name: 'heartbeat',
 *   async start({ client, signal }) {
 *     while (!signal.aborted) { await beat(client); await sleep(10_000, { signal }).catch(() => {}); }
 *   },
 * });
 * ```
 */
export interface Runnable {
  /** The runnable's name in logs. */
  readonly name: string;
  /**
   * Before the caches start, after the controllers asked for theirs: ask `cache` for the
   * informers the runnable reads, so that the manager's sync (and `ready()`) covers them, or
   * read through the controllers' own ({@link ManagerCache.existingInformer}).
   */
  prepare?(setup: RunnableSetup): void | Promise<void>;
  /** Runs until `signal` aborts; a rejection before that stops the manager with the error. */
  start(context: RunnableContext): void | Promise<void>;
  /** Whether it runs only on the leader (default true, as controllers). */
  readonly needLeaderElection?: boolean;
}

const isRunnable = (x: ControllerDefinition<KubeObject> | Runnable): x is Runnable => !('reconcileFn' in x);

/** The manager lost its Lease: its controllers stopped; `start()` rejects with this. */
export class LeaderElectionLostError extends Error {
  constructor(lease: string) {
    super(`leader election lost: lease ${lease}`);
    this.name = 'LeaderElectionLostError';
  }
}

/**
 * Runs controllers: `add()` them, then `start()` — it resolves when the manager has stopped
 * (SIGTERM, SIGINT, or `stop()`).
 *
 * @example
 * ```ts
 * await new Manager({ leaderElection: { id: 'foo-operator' } }).add(fooController).start();
 * ```
 */
export class Manager {
  /** The metrics registry behind `/metrics`. */
  readonly registry: Registry;
  /** The logger. */
  readonly log: Logger;
  private readonly options: ManagerOptions;
  private readonly definitions: ControllerDefinition<KubeObject>[] = [];
  private readonly controllers: Controller<KubeObject>[] = [];
  private readonly runnables: Runnable[] = [];
  private readonly readyzChecks = new Map<string, () => boolean>();
  private readonly fieldIndexes: FieldIndex[] = [];
  private rawClient: Client | undefined;
  private trackedClient: Client | undefined;
  private ownsClient = false;
  private managerCache: ManagerCache | undefined;
  private recorder: EventRecorder | undefined;
  private informers: InformerFactory | undefined;
  private elector: LeaderElector | undefined;
  private sharding: Sharding | undefined;
  private readonly tracker = new WriteTracker();
  private readonly controllerMetrics: ControllerMetrics;
  private readonly queueMetrics: WorkQueueMetrics;
  private readonly leaderGauge: Gauge<'name'>;
  private readonly permissionMonitor: PermissionMonitor;
  private clientMetrics: ClientMetrics | undefined;
  private servers: Server[] = [];
  private urls: { health?: string; metrics?: string } = {};
  private synced = false;
  private running: Promise<void> | undefined;
  private stopRequested: ((mode: { release: boolean; graceful: boolean; error?: Error }) => void) | undefined;
  /** Set once a stop was asked for: a start still preparing goes no further. */
  private stopAsked = false;
  private readonly stopMode = new Promise<{ release: boolean; graceful: boolean; error?: Error }>(
    (resolve) => {
      this.stopRequested = (mode) => {
        this.stopAsked = true;
        resolve(mode);
      };
    },
  );
  private readyWaiters: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  private failed: unknown;

  constructor(options: ManagerOptions = {}) {
    this.options = options;
    this.log = options.logger ?? defaultLogger();
    this.registry = options.registry ?? new Registry();
    this.controllerMetrics = new ControllerMetrics(this.registry);
    this.queueMetrics = new WorkQueueMetrics({ registry: this.registry });
    this.leaderGauge = new Gauge({
      name: 'leader_election_master_status',
      help: 'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. "name" is the string used to identify the lease.',
      labelNames: ['name'],
      registers: [this.registry],
    });
    this.clientMetrics = options.clientMetrics;
    this.permissionMonitor = new PermissionMonitor(this.registry, this.log, () => this.permissions);
    if (options.sharding && options.leaderElection)
      throw new Error('sharding replaces leader election: set one');
  }

  /** This replica's shard id, with `sharding`. */
  get shardId(): string | undefined {
    return this.sharding?.shardId ?? this.options.sharding?.shardId;
  }

  /** Objects watched by this replica's shard per controller, with `sharding`, once started. */
  get shardAssignments(): Record<string, number> {
    return this.sharding?.assigned() ?? {};
  }

  /**
   * Adds a check to `/readyz` (controller-runtime's `AddReadyzCheck`): the manager is ready only
   * while every check passes, e.g. the webhook server's `webhook` check while it listens.
   */
  addReadyzCheck(name: string, check: () => boolean): this {
    this.readyzChecks.set(name, check);
    return this;
  }

  /** Adds a controller, or a {@link Runnable} (before `start()`). */
  add<T extends KubeObject>(definition: ControllerDefinition<T> | Runnable): this {
    if (this.running) throw new Error('add controllers before start()');
    const added = definition as ControllerDefinition<KubeObject> | Runnable;
    if ([...this.definitions, ...this.runnables].some((d) => d.name === added.name)) {
      throw new Error(`a controller named ${JSON.stringify(added.name)} was already added`);
    }
    if (isRunnable(added)) this.runnables.push(added);
    else this.definitions.push(added);
    return this;
  }

  /**
   * Indexes `field` of a kind in the shared cache (controller-runtime's
   * `GetFieldIndexer().IndexField`), before `start()`: reads may then select on it.
   *
   * @example
   * ```ts
   * manager.indexField(Pod, 'spec.nodeName', (p) => p.spec?.nodeName);
   * // in a reconcile:
   * await cache.list(Pod, { fieldSelector: { 'spec.nodeName': node.metadata!.name! } });
   * ```
   */
  indexField<T extends KubeObject>(kind: ResourceDescriptor<T>, field: string, extract: IndexFunc<T>): this {
    if (this.running) throw new Error('index fields before start()');
    this.fieldIndexes.push({ kind, field, extract: extract as IndexFunc<KubeObject> });
    return this;
  }

  /** The RBAC the manager needs, for `kubeloop/manifests`' `derivePolicyRules`/`rbacManifests`. */
  get permissions(): ManagerPermissions {
    return {
      controllers: this.definitions.map((d) => d.permissions),
      leaderElection: this.options.leaderElection !== undefined || this.options.sharding !== undefined,
      ...(this.options.sharding && { sharding: true }),
      events: true,
      ...(this.options.namespace && { namespaces: [this.options.namespace] }),
    };
  }

  /** The manager's client (writes tracked for read-your-writes); available once started. */
  get client(): Client {
    if (!this.trackedClient) throw new Error('the manager has not started');
    return this.trackedClient;
  }

  /** The shared cache; available once started. */
  get cache(): CacheReader {
    if (!this.managerCache) throw new Error('the manager has not started');
    return this.managerCache;
  }

  /** The event recorder; available once started. */
  get events(): EventRecorder {
    if (!this.recorder) throw new Error('the manager has not started');
    return this.recorder;
  }

  /** Whether this manager leads (always true without leader election, once started). */
  get isLeader(): boolean {
    return this.elector ? this.elector.isLeader : this.running !== undefined;
  }

  /** This manager's leader election identity. */
  get identity(): string | undefined {
    return this.elector?.identity;
  }

  /** Base URL of the probes (`http://host:port`), once listening. */
  get healthUrl(): string | undefined {
    return this.urls.health;
  }

  /** Base URL of `/metrics`, once listening. */
  get metricsUrl(): string | undefined {
    return this.urls.metrics;
  }

  /** Resolves once the endpoints listen and the caches synced; rejects if the start failed. */
  ready(): Promise<void> {
    if (this.synced) return Promise.resolve();
    if (this.failed !== undefined) return Promise.reject(this.failed);
    return new Promise((resolve, reject) => this.readyWaiters.push({ resolve, reject }));
  }

  /**
   * Runs the manager until it stops; resolves after a clean shutdown, rejects when the caches
   * could not sync or leadership was lost.
   */
  start(): Promise<void> {
    const limit = this.options.youngGenerationLimitMb ?? false;
    const uncap = !this.running && limit !== false ? capYoungGeneration(limit) : undefined;
    this.running ??= this.run().then(
      () => uncap?.(),
      (err: unknown) => {
        uncap?.();
        this.failed = err;
        for (const w of this.readyWaiters.splice(0)) w.reject(err);
        throw err;
      },
    );
    return this.running;
  }

  /**
   * Graceful shutdown: stops taking work, waits for running reconciles (up to
   * `gracefulShutdownTimeoutMs`), releases the Lease, stops the cache. Resolves when done.
   */
  async stop(): Promise<void> {
    this.stopRequested?.({ release: true, graceful: true });
    await this.running?.catch(() => undefined);
  }

  /**
   * Stops at once as a crash would: reconciles are abandoned and the Lease is not released
   * (another replica takes over when it expires). For tests of failover.
   */
  async abort(): Promise<void> {
    this.stopRequested?.({ release: false, graceful: false });
    await this.running?.catch(() => undefined);
  }

  private async run(): Promise<void> {
    const o = this.options;
    let signalled = false;
    const onSignal = () => {
      // Ctrl-C reaches every process of the terminal's group: a supervisor (kubeloop dev, a
      // shell script) often passes on a SIGTERM of its own right after. One shutdown, logged once.
      if (signalled) return;
      signalled = true;
      this.log.info('signal received, shutting down');
      this.stopRequested?.({ release: true, graceful: true });
    };
    if (o.handleSignals ?? true) {
      process.on('SIGTERM', onSignal);
      process.on('SIGINT', onSignal);
    }
    try {
      await this.runUntilStopped();
    } finally {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
    }
  }

  private async runUntilStopped(): Promise<void> {
    const o = this.options;
    if (o.client) {
      this.rawClient = o.client;
    } else {
      this.clientMetrics ??= new ClientMetrics();
      this.rawClient = await Client.load({ onRequest: this.clientMetrics.observe });
      this.ownsClient = true;
    }
    const ownedClient = this.rawClient;
    // Every request of the manager (reconciles, cache, events, leases) reports a 403 loudly.
    const monitor = this.permissionMonitor;
    const raw = monitor.client(ownedClient);
    // Leases renew on connections of their own, never behind the bulk writes (client-go's too).
    const leases = o.leaderElection || o.sharding ? monitor.client(ownedClient.withOwnConnections()) : raw;
    const name = o.name ?? o.leaderElection?.id ?? 'kubeloop-manager';
    this.trackedClient = trackingClient(raw, this.tracker);
    const informers = new InformerFactory(raw, {
      onLifecycle: (event) => monitor.informerEvent(event, informers.informers),
    });
    this.informers = informers;
    this.managerCache = new ManagerCache(this.informers, this.tracker, raw, {
      namespace: o.namespace ?? '',
      readYourWritesTimeoutMs: o.readYourWritesTimeoutMs ?? 10_000,
    });
    this.recorder = new EventRecorder(raw, {
      reportingController: name,
      reportingInstance: `${name}-${hostname()}`,
      log: this.log,
    });
    let mode: { release: boolean; graceful: boolean; error?: Error } = { release: true, graceful: true };
    let startedControllers = false;
    const cache = this.managerCache;
    for (const i of [...this.fieldIndexes, ...this.definitions.flatMap((d) => d.indexes)]) {
      cache.indexField(i.kind, i.field, i.extract);
    }
    const setup: RunnableSetup = { client: this.trackedClient, cache, events: this.recorder, log: this.log };
    const runnablesStop = new AbortController();
    // Every runnable may wait on it, as on a context's Done().
    setMaxListeners(0, runnablesStop.signal);
    const runningRunnables: Promise<void>[] = [];
    const startRunnables = (leader: boolean) => {
      for (const r of this.runnables) {
        if ((r.needLeaderElection ?? true) !== leader) continue;
        const log = this.log.child({ runnable: r.name });
        const run = (async () => r.start({ ...setup, log, signal: runnablesStop.signal }))().catch(
          (err: unknown) => {
            if (runnablesStop.signal.aborted) return;
            log.error({ err }, 'runnable failed');
            this.stopRequested?.({
              release: true,
              graceful: true,
              error: err instanceof Error ? err : new Error(String(err)),
            });
          },
        );
        runningRunnables.push(run);
      }
    };
    try {
      await this.listen();
      const sharding = o.sharding
        ? new Sharding(raw, leases, o.sharding, this.registry, this.log, (error) =>
            this.stopRequested?.({ release: false, graceful: false, error }),
          )
        : undefined;
      this.sharding = sharding;
      for (const plain of this.definitions) {
        const d = sharding ? sharding.wrap(plain) : plain;
        const own = d.options.client;
        const c = new Controller(d, {
          client: own ? trackingClient(monitor.client(own), this.tracker) : this.trackedClient,
          rawClient: raw,
          cache: this.managerCache,
          events: this.recorder,
          log: this.log,
          hintFor: (err) => monitor.hintFor(err),
          metrics: this.controllerMetrics,
          queueMetrics: this.queueMetrics,
          ...(o.maxConcurrentReconciles !== undefined && {
            maxConcurrentReconciles: o.maxConcurrentReconciles,
          }),
        });
        await c.prepare();
        this.controllers.push(c);
      }
      sharding?.prepare(cache, this.recorder);
      // After the controllers: a runnable may read through the informers they asked for.
      for (const r of this.runnables) {
        // A stop asked for while an earlier runnable prepared: the rest is not started at all.
        if (this.stopAsked) break;
        await r.prepare?.({ ...setup, log: this.log.child({ runnable: r.name }) });
      }
      this.informers.start();
      // A forbidden informer does not fail the start at once: it is logged with what to declare,
      // counted, keeps /readyz failing, and syncs as soon as its RBAC is fixed (controller-runtime
      // also waits until its cache sync timeout).
      const sync = this.informers.waitForSync({
        timeoutMs: o.cacheSyncTimeoutMs ?? 120_000,
        failOnAuth: false,
      });
      const outcome = await Promise.race([sync.then(() => undefined), this.stopMode]);
      if (outcome) {
        sync.catch(() => undefined);
        mode = outcome;
        return;
      }
      this.synced = true;
      for (const w of this.readyWaiters.splice(0)) w.resolve();
      this.log.info({ controllers: this.controllers.map((c) => c.name) }, 'caches synced');

      const startControllers = () => {
        startedControllers = true;
        for (const c of this.controllers) c.start();
        startRunnables(true);
      };
      startRunnables(false);
      const le = o.leaderElection;
      if (le) {
        this.leaderGauge.set({ name: le.id }, 0);
        this.elector = new LeaderElector(
          leases,
          le,
          {
            onStartedLeading: () => {
              this.leaderGauge.set({ name: le.id }, 1);
              startControllers();
            },
            onStoppedLeading: () => {
              this.leaderGauge.set({ name: le.id }, 0);
              // Stop reconciling at once: another replica may already lead.
              for (const c of this.controllers) void c.stop(0);
              runnablesStop.abort(new LeaderElectionLostError(le.id));
              this.stopRequested?.({
                release: false,
                graceful: false,
                error: new LeaderElectionLostError(le.id),
              });
            },
            onNewLeader: (id) => this.log.info({ lease: le.id, leader: id }, 'new leader observed'),
          },
          this.log,
        );
        void this.elector.run();
      } else {
        startControllers();
        sharding?.start().catch((err: unknown) =>
          this.stopRequested?.({
            release: true,
            graceful: true,
            error: err instanceof Error ? err : new Error(String(err)),
          }),
        );
      }
      mode = await this.stopMode;
    } finally {
      const grace = mode.graceful ? (o.gracefulShutdownTimeoutMs ?? 30_000) : 0;
      // One grace period for the whole shutdown (controller-runtime's); the events get the rest.
      const deadline = Date.now() + grace;
      if (startedControllers) await Promise.all(this.controllers.map((c) => c.stop(grace)));
      runnablesStop.abort(new Error('the manager stopped'));
      await Promise.all(runningRunnables);
      // After the controllers: a released shard Lease moves the objects at once.
      await this.sharding?.stop(mode.release);
      if (this.elector) {
        await this.elector.stop(mode.release);
        if (o.leaderElection) this.leaderGauge.set({ name: o.leaderElection.id }, 0);
      }
      await this.recorder.stop(mode.graceful, deadline - Date.now());
      await this.informers.stop();
      await Promise.all(this.servers.map(closeServer));
      this.servers = [];
      if (leases !== raw) await leases.close();
      if (this.ownsClient) await ownedClient.close();
      for (const w of this.readyWaiters.splice(0))
        w.reject(new Error('the manager stopped before its caches synced'));
      this.log.info('manager stopped');
    }
    if (mode.error) throw mode.error;
  }

  private async listen(): Promise<void> {
    const o = this.options;
    const health = o.healthProbeAddress === undefined ? ':8081' : o.healthProbeAddress;
    const metrics = o.metricsAddress === undefined ? ':8080' : o.metricsAddress;
    // Not ready while an informer the controllers need is refused its list or watch.
    const probes: Endpoints = {
      healthz: () => true,
      readyz: () =>
        this.synced &&
        this.permissionMonitor.informersAllowed &&
        [...this.readyzChecks.values()].every((c) => c()),
    };
    const metricsEndpoint: Endpoints = { metrics: () => this.renderMetrics() };
    if (health !== false && health === metrics) {
      const { server, url } = await serveEndpoints(health, { ...probes, ...metricsEndpoint });
      this.servers.push(server);
      this.urls = { health: url, metrics: url };
      return;
    }
    if (health !== false) {
      const { server, url } = await serveEndpoints(health, probes);
      this.servers.push(server);
      this.urls.health = url;
    }
    if (metrics !== false) {
      const { server, url } = await serveEndpoints(metrics, metricsEndpoint);
      this.servers.push(server);
      this.urls.metrics = url;
    }
  }

  private async renderMetrics(): Promise<string> {
    const own = await this.registry.metrics();
    return this.clientMetrics ? `${own}\n${this.clientMetrics.render()}` : own;
  }
}
