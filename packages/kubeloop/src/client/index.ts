/**
 * `kubeloop/client` — a typed Kubernetes client on undici.
 *
 * - {@link Client}: connection (kubeconfig, in-cluster, or by hand), typed APIs per kind
 *   (`client.api(Pod, 'default')`), object-level writes (`client.apply(obj, …)`).
 * - {@link ResourceApi}: get, list (and pages), create, update, patch (merge, JSON, strategic,
 *   apply), apply, delete, deleteCollection, watch, status and scale subresources.
 * - Errors: {@link ApiError} for every answer of the server (`isNotFound`, `isConflict`, …),
 *   {@link NetworkError} when there was none, {@link ConfigError} for broken configuration.
 *
 * @example
 * ```ts
 * import { Client, ConfigMap, isNotFound } from 'kubeloop/client';
 * const client = await Client.load();
 * const cms = client.api(ConfigMap);
 * try { await cms.get('settings'); } catch (err) { if (!isNotFound(err)) throw err; }
 * ```
 */

export {
  ApiError,
  isAlreadyExists,
  isBadRequest,
  isConflict,
  isForbidden,
  isGone,
  isInvalid,
  isNotFound,
  isTooManyRequests,
  isUnauthorized,
  type Status,
  type StatusCause,
  type StatusDetails,
  type StatusReason,
} from '../api/status.js';
export { ResourceApi, type Scale } from './api.js';
export * from './builtin-kinds.js';
export {
  Client,
  type ClientOptions,
  type KubeconfigClientOptions,
  type LoadOptions,
  type StatusOf,
  type VersionInfo,
} from './client.js';
export { ConfigError } from './config/errors.js';
export {
  CONTAINER_ROOT_ENV,
  type InClusterOptions,
  inClusterConfig,
  isInCluster,
  SERVICE_ACCOUNT_DIR,
} from './config/in-cluster.js';
export {
  type Kubeconfig,
  type KubeconfigEntry,
  kubeconfigPaths,
  loadKubeconfig,
  mergeKubeconfigs,
  parseKubeconfig,
  type ReadKubeconfigOptions,
  type ResolveKubeconfigOptions,
  readKubeconfig,
  resolveKubeconfig,
} from './config/kubeconfig.js';
export type { ConnectionConfig, ExecConfig, ExecEnvVar, Impersonation, Origin } from './config/types.js';
export {
  apiVersionOf,
  formatGvk,
  type GroupVersionKind,
  type ObjectOf,
  parseApiVersion,
  type ResolvedResource,
  type ResourceDescriptor,
} from './descriptor.js';
export { type DiscoveredResource, Discovery, isNoKindMatch, NoKindMatchError } from './discovery.js';
export type { ListHead } from './list-stream.js';
export type {
  ApplyOptions,
  DeleteCollectionOptions,
  DeleteOptions,
  FieldSelectorInput,
  FieldValidation,
  GetOptions,
  LabelSelectorInput,
  ListOptions,
  ListStreamOptions,
  PatchOptions,
  PatchType,
  RequestOptions,
  SelectorOptions,
  WatchOptions,
  WriteOptions,
} from './options.js';
export { isNetworkError, NetworkError, type NetworkErrorKind } from './transport/errors.js';
// The kept-alive HTTP/1.1 pool, for other HTTP clients of the project (the control plane's webhook calls).
export { Http1Pool, type PoolRequest, type PoolResponse } from './transport/http1-pool.js';
export type { StreamTarget } from './transport/http1-stream.js';
export { ClientMetrics, DURATION_BUCKETS, type RequestRecord } from './transport/metrics.js';
export type { RateLimitOptions } from './transport/rate-limit.js';
export type { RetryInfo, RetryOptions } from './transport/retry.js';
export { CLIENT_VERSION, type TransportOptions } from './transport/transport.js';
export type {
  ApplyConfiguration,
  DeepPartial,
  JsonPatchOperation,
  KubeObject,
  ListMeta,
  MergePatch,
  ObjectList,
  ObjectMeta,
} from './types.js';
export { WatchDecodeError, type WatchEvent } from './watch.js';
