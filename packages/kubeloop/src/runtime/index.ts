/**
 * `kubeloop/runtime` — the machinery of controllers, in layers that each work alone
 * (as kube-rs's `kube-runtime`):
 *
 * - {@link watcher}: a collection as an unbroken stream of changes — list, then watch with
 *   bookmarks; resumes dropped streams, relists on 410 delivering only the differences,
 *   streams watch-lists where the server supports them, backs off on errors, and reopens
 *   streams gone quiet.
 * - {@link Store} and {@link Informer}: a watcher that keeps an indexed, frozen cache and calls
 *   handlers; {@link InformerFactory} shares one informer per collection.
 * - {@link WorkQueue}: the deduplicating, delaying, rate-limited queue that feeds reconcilers,
 *   with client-go's metrics.
 *
 * @example
 * ```ts
 * import { Client, ConfigMap } from 'kubeloop/client';
 * import { InformerFactory, WorkQueue, objectKey } from 'kubeloop/runtime';
 *
 * const client = await Client.load();
 * const informers = new InformerFactory(client);
 * const queue = new WorkQueue<string>({ name: 'configmaps' });
 * informers.informer(ConfigMap).addEventHandler({
 *   onAdd: (cm) => queue.add(objectKey(cm)),
 *   onUpdate: (_old, cm) => queue.add(objectKey(cm)),
 *   onDelete: (cm) => queue.add(objectKey(cm)),
 * });
 * informers.start();
 * await informers.waitForSync({ timeoutMs: 60_000 });
 * ```
 */

export {
  InformerFactory,
  type InformerFactoryOptions,
  type InformerRequest,
} from './cache/factory.js';
export {
  type EventHandler,
  Informer,
  type InformerLifecycleEvent,
  type InformerOptions,
  InformerSyncError,
  type SyncFailure,
  type WaitForSyncOptions,
} from './cache/informer.js';
export {
  type IndexFunc,
  type Lister,
  type ListFilter,
  NAMESPACE_INDEX,
  type NamespaceLister,
  Store,
  type StoreOptions,
} from './cache/store.js';
export {
  deepFreeze,
  type PartialObjectMetadata,
  stripManagedFields,
  type Transform,
  toPartialObjectMetadata,
} from './cache/transform.js';
export {
  type Clock,
  FakeClock,
  realClock,
  sleep,
  type Timer,
  type TimerOptions,
  untilAborted,
} from './clock.js';
export {
  ControllerBuilder,
  type ControllerDefinition,
  type ControllerOptions,
  controller,
  type MapFn,
  type WatchSpec,
} from './controller/builder.js';
export { Controller } from './controller/controller.js';
export { isPanic, isTerminalError, ReconcileTimeoutError, TerminalError } from './controller/errors.js';
export { ControllerMetrics, RECONCILE_TIME_BUCKETS, type ReconcileOutcome } from './controller/metrics.js';
export {
  and,
  annotationsChanged,
  generationChanged,
  labelsChanged,
  not,
  or,
  type Predicate,
  predicate,
  resourceVersionChanged,
} from './controller/predicates.js';
export type {
  CacheLister,
  CacheReader,
  GoneFn,
  ObjectEventRecorder,
  ReconcileContext,
  Reconciled,
  ReconcileFn,
  ReconcileRequest,
  ReconcileResult,
} from './controller/types.js';
export {
  type Condition,
  type ConditionInput,
  type ConditionLike,
  findCondition,
  isConditionTrue,
  removeCondition,
  setCondition,
} from './helpers/conditions.js';
export {
  createOrPatch,
  createOrUpdate,
  type MutateFn,
  type OperationResult,
  type PatchOperationResult,
} from './helpers/create-or-update.js';
export { deepEqual, mergePatchBetween } from './helpers/diff.js';
export {
  addFinalizer,
  finalize,
  hasFinalizer,
  isBeingDeleted,
  removeFinalizer,
} from './helpers/finalizers.js';
export {
  controllerOf,
  OwnerReferenceError,
  setControllerReference,
  setOwnerReference,
} from './helpers/owner.js';
export { writeStatus } from './helpers/status.js';
export { objectKey, splitKey } from './keys.js';
export { ManagerCache } from './manager/cache.js';
export { EventRecorder, type EventRecorderOptions, type EventType, microTime } from './manager/events.js';
export {
  MANAGER_FLAGS_USAGE,
  type ManagerFlags,
  ManagerFlagsError,
  type ManagerFlagsOptions,
  managerFlags,
  managerOptionsFromFlags,
  parseManagerFlags,
} from './manager/flags.js';
export { type LeaderElectionOptions, LeaderElector } from './manager/leader-election.js';
export {
  LeaderElectionLostError,
  Manager,
  type ManagerOptions,
  type Runnable,
  type RunnableContext,
  type RunnableSetup,
} from './manager/manager.js';
export {
  type DeniedRequest,
  forbiddenHint,
  PermissionMonitor,
  rulesGrant,
} from './manager/permissions.js';
export { atLeast, WriteTracker } from './manager/read-your-writes.js';
export { trackingClient } from './manager/tracking-client.js';
export {
  CONTROLLERS_ANNOTATION,
  drainLabel,
  RING_LABEL,
  SHARDING_PREFIX,
  type ShardedControllerInfo,
  sharderLeaseName,
  shardLabel,
} from './sharding/labels.js';
export { leaseExpiry } from './sharding/membership.js';
export { HashRing } from './sharding/ring.js';
export { shardingKey } from './sharding/sharder.js';
export { type ShardingOptions, ShardLeaseLostError } from './sharding/sharding.js';
export { Backoff, type BackoffOptions } from './watcher/backoff.js';
export {
  describeCollection,
  type ListMode,
  type WatcherEvent,
  type WatcherLifecycleEvent,
  type WatcherMemory,
  type WatcherOptions,
  warnOnAuthErrors,
  watcher,
} from './watcher/watcher.js';
export { WORKQUEUE_BUCKETS, WorkQueueMetrics } from './workqueue/metrics.js';
export { type ShutdownOptions, WorkQueue, type WorkQueueOptions } from './workqueue/queue.js';
export {
  type BucketOptions,
  BucketRateLimiter,
  type ControllerRateLimiterOptions,
  defaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
  type RateLimiter,
} from './workqueue/rate-limiter.js';
