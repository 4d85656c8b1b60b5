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
export { type Clock, FakeClock, realClock, sleep, type Timer, type TimerOptions } from './clock.js';
export { objectKey, splitKey } from './keys.js';
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
