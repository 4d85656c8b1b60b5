/**
 * The Kubernetes client: connection, typed resource APIs, and object-level shortcuts in the
 * manner of controller-runtime's client.
 */
import type { Status } from '../api/status.js';
import { type ClientCore, ResourceApi } from './api.js';
import { builtinDescriptor } from './builtin-kinds.js';
import { type InClusterOptions, inClusterConfig, isInCluster } from './config/in-cluster.js';
import {
  loadKubeconfig,
  type ReadKubeconfigOptions,
  type ResolveKubeconfigOptions,
} from './config/kubeconfig.js';
import type { ConnectionConfig } from './config/types.js';
import { parseApiVersion, type ResolvedResource, type ResourceDescriptor } from './descriptor.js';
import { Discovery } from './discovery.js';
import type {
  ApplyOptions,
  DeleteOptions,
  GetOptions,
  PatchOptions,
  RequestOptions,
  WriteOptions,
} from './options.js';
import { Transport, type TransportOptions } from './transport/transport.js';
import type { JsonPatchOperation, KubeObject, MergePatch } from './types.js';

/** Settings of a {@link Client} beyond its connection. */
export interface ClientOptions extends TransportOptions {
  /** Default namespace; overrides the configuration's (`default` when neither sets one). */
  namespace?: string;
}

/** Options of {@link Client.fromKubeconfig}. */
export interface KubeconfigClientOptions
  extends ReadKubeconfigOptions,
    ResolveKubeconfigOptions,
    ClientOptions {
  /** kubeconfig YAML to use instead of reading files. */
  kubeconfig?: string;
}

/** Options of {@link Client.load}. */
export interface LoadOptions extends KubeconfigClientOptions, Omit<InClusterOptions, 'env'> {}

/** `/version` of the server. */
export interface VersionInfo {
  major: string;
  minor: string;
  gitVersion: string;
  [field: string]: string;
}

/** The `status` type of an object type. */
export type StatusOf<T> = T extends { status?: infer S } ? S : unknown;

/** Kinds {@link Client.forObject} remembers (beyond them it works them out each time). */
const MAX_DESCRIPTORS = 256;

/**
 * A Kubernetes client. One client holds one pooled connection to one API server with one
 * identity; create it once, share it, `close()` it at shutdown.
 *
 * @example
 * ```ts
 * import { Client, Deployment, ConfigMap, isNotFound } from 'kubeloop/client';
 *
 * const client = await Client.load();                    // kubeconfig or in-cluster
 * const deployments = client.api(Deployment);            // the client's default namespace
 * const web = await deployments.get('web');
 * await client.apply(
 *   { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cfg', namespace: 'default' }, data: { a: '1' } },
 *   { fieldManager: 'my-operator' },
 * );
 * await client.close();
 * ```
 */
export class Client {
  /** The default namespace of namespaced APIs. */
  readonly namespace: string;
  /** Base URL of the server. */
  readonly server: string;
  /** Resource discovery (kind → plural, scope, verbs), cached. */
  readonly discovery: Discovery;
  private readonly transport: Transport;
  private readonly core: ClientCore;
  /**
   * The descriptor of each apiVersion and kind {@link forObject} has seen, by apiVersion then
   * kind: a write of an object found it with two look-ups where it parsed the apiVersion and
   * built a key to find a built-in kind (~1 % of a busy operator's CPU). Bounded, as kinds come
   * from objects.
   */
  private readonly descriptors = new Map<string, Map<string, ResourceDescriptor>>();
  private descriptorCount = 0;

  constructor(
    private readonly config: ConnectionConfig,
    private readonly options: ClientOptions = {},
  ) {
    this.transport = new Transport(config, options);
    this.namespace = options.namespace ?? config.namespace ?? 'default';
    this.server = config.server;
    this.discovery = new Discovery(async (path) =>
      JSON.parse((await this.transport.request({ method: 'GET', path })).body),
    );
    const discovery = this.discovery;
    this.core = {
      transport: this.transport,
      discovery,
      async resolve(d: ResourceDescriptor): Promise<ResolvedResource> {
        if (d.plural !== undefined && d.namespaced !== undefined) {
          return {
            group: d.group,
            version: d.version,
            kind: d.kind,
            plural: d.plural,
            namespaced: d.namespaced,
          };
        }
        const found = await discovery.resolve(d);
        return {
          ...found,
          ...(d.plural !== undefined && { plural: d.plural }),
          ...(d.namespaced !== undefined && { namespaced: d.namespaced }),
        };
      },
    };
  }

  /**
   * A client from kubeconfig files (`KUBECONFIG`, merged, or `~/.kube/config`; or `path`), for
   * the current or the given `context`.
   *
   * @example
   * ```ts
   * const client = await Client.fromKubeconfig({ context: 'kind-dev', namespace: 'team-a' });
   * ```
   */
  static async fromKubeconfig(options: KubeconfigClientOptions = {}): Promise<Client> {
    return new Client(await loadKubeconfig(options), options);
  }

  /** A client from the pod's service account (`KUBERNETES_SERVICE_HOST`/`PORT` and the mounted files). */
  static async inCluster(options: InClusterOptions & ClientOptions = {}): Promise<Client> {
    return new Client(await inClusterConfig(options), options);
  }

  /**
   * The configuration controller-runtime would pick: an explicit `path`, else `KUBECONFIG`,
   * else in-cluster when running in a pod, else `~/.kube/config`.
   */
  static async load(options: LoadOptions = {}): Promise<Client> {
    const env = options.env ?? process.env;
    if (
      options.path === undefined &&
      options.kubeconfig === undefined &&
      !env.KUBECONFIG &&
      isInCluster(env)
    ) {
      return Client.inCluster({ ...options, env });
    }
    return Client.fromKubeconfig(options);
  }

  /**
   * The typed API of a kind. For a namespaced kind, `namespace` defaults to the client's
   * namespace; `''` means all namespaces (lists and watches across them). Cluster-scoped
   * kinds ignore it. Custom kinds: pass a descriptor (plural and scope are discovered when
   * not given).
   *
   * @example
   * ```ts
   * const pods = client.api(Pod, 'kube-system');
   * const all = await client.api(Pod, '').list({ labelSelector: { app: 'web' } });
   * const foos = client.api<Foo>({ group: 'example.com', version: 'v1', kind: 'Foo' });
   * ```
   */
  api<T extends KubeObject>(descriptor: ResourceDescriptor<T>, namespace?: string): ResourceApi<T> {
    return new ResourceApi<T>(this.core, descriptor, namespace ?? this.namespace);
  }

  /** Plural, scope (and verbs, when discovered) of a kind. */
  resolve(descriptor: ResourceDescriptor): Promise<ResolvedResource> {
    return this.core.resolve(descriptor);
  }

  /** Reads one object of a kind (namespace: the client's by default). */
  async get<T extends KubeObject>(
    descriptor: ResourceDescriptor<T>,
    name: string,
    options: GetOptions & { namespace?: string } = {},
  ): Promise<T> {
    return this.api(descriptor, options.namespace).get(name, options);
  }

  /** Creates an object; its kind comes from `apiVersion`/`kind`, its namespace from `metadata.namespace` (or the client's). */
  async create<T extends KubeObject>(obj: T, options: WriteOptions = {}): Promise<T> {
    return this.forObject(obj).create(obj, options);
  }

  /** Replaces an object (PUT). */
  async update<T extends KubeObject>(obj: T, options: WriteOptions = {}): Promise<T> {
    return this.forObject(obj).update(obj, options);
  }

  /** Replaces the status of an object (PUT on `/status`). */
  async updateStatus<T extends KubeObject>(obj: T, options: WriteOptions = {}): Promise<T> {
    return this.forObject(obj).updateStatus(obj, options);
  }

  /** Patches an object (merge patch by default; see {@link ResourceApi.patch}). */
  patch<T extends KubeObject>(
    obj: T,
    patch: readonly JsonPatchOperation[],
    options: PatchOptions & { type: 'json' },
  ): Promise<T>;
  patch<T extends KubeObject>(
    obj: T,
    patch: Record<string, unknown>,
    options: PatchOptions & { type: 'strategic' },
  ): Promise<T>;
  patch<T extends KubeObject>(
    obj: T,
    patch: MergePatch<T>,
    options?: PatchOptions & { type?: 'merge' },
  ): Promise<T>;
  async patch<T extends KubeObject>(obj: T, patch: unknown, options: PatchOptions = {}): Promise<T> {
    const api = this.forObject(obj);
    return (api.patch as (n: string, p: unknown, o: PatchOptions) => Promise<T>).call(
      api,
      nameOf(obj),
      patch,
      options,
    );
  }

  /**
   * Merge-patches the `status` of an object through the status subresource.
   *
   * @example
   * ```ts
   * await client.patchStatus(foo, { availableReplicas: 3 });
   * ```
   */
  async patchStatus<T extends KubeObject>(
    obj: T,
    status: MergePatch<StatusOf<T>>,
    options: WriteOptions = {},
  ): Promise<T> {
    const api = this.forObject(obj);
    return (api.patchStatus as (n: string, p: unknown, o: PatchOptions) => Promise<T>).call(
      api,
      nameOf(obj),
      { status },
      options,
    );
  }

  /** Server-side apply of an object (its `apiVersion`, `kind` and `metadata.name` must be set). */
  async apply<T extends KubeObject>(obj: T, options: ApplyOptions): Promise<T> {
    return this.forObject(obj).apply(obj, options);
  }

  /** Server-side apply of an object's status. */
  async applyStatus<T extends KubeObject>(obj: T, options: ApplyOptions): Promise<T> {
    return this.forObject(obj).applyStatus(obj, options);
  }

  /** Deletes an object (by its kind, namespace and name). */
  async delete<T extends KubeObject>(obj: T, options: DeleteOptions = {}): Promise<T | Status> {
    return this.forObject(obj).delete(nameOf(obj), options);
  }

  /** The `ResourceApi` of an object's kind and namespace. */
  forObject<T extends KubeObject>(obj: T): ResourceApi<T> {
    if (!obj.apiVersion || !obj.kind) {
      throw new TypeError('the object needs apiVersion and kind (or use client.api(Kind) for a typed API)');
    }
    let kinds = this.descriptors.get(obj.apiVersion);
    let descriptor = kinds?.get(obj.kind);
    if (descriptor === undefined) {
      const gvk = { ...parseApiVersion(obj.apiVersion), kind: obj.kind };
      descriptor = builtinDescriptor(gvk) ?? gvk;
      if (this.descriptorCount < MAX_DESCRIPTORS) {
        if (!kinds) {
          kinds = new Map();
          this.descriptors.set(obj.apiVersion, kinds);
        }
        kinds.set(obj.kind, descriptor);
        this.descriptorCount++;
      }
    }
    return this.api(descriptor as ResourceDescriptor<T>, obj.metadata?.namespace || this.namespace);
  }

  /** The server's `/version`. */
  async version(options: RequestOptions = {}): Promise<VersionInfo> {
    const res = await this.transport.request({ method: 'GET', path: '/version', ...options });
    return JSON.parse(res.body) as VersionInfo;
  }

  /**
   * A raw request for what the typed API does not cover; the answer parsed as JSON. Error
   * answers throw `ApiError`.
   */
  async request<R = unknown>(
    method: string,
    path: string,
    options: RequestOptions & { body?: unknown; contentType?: string } = {},
  ): Promise<R> {
    const res = await this.transport.request({
      method,
      path,
      ...(options.body !== undefined && {
        body: typeof options.body === 'string' ? options.body : JSON.stringify(options.body),
        contentType: options.contentType ?? 'application/json',
      }),
      signal: options.signal,
      timeoutMs: options.timeoutMs,
    });
    return (res.body ? JSON.parse(res.body) : undefined) as R;
  }

  /** Closes the connections, ending open watches. */
  close(): Promise<void> {
    return this.transport.close();
  }

  /**
   * A client of the same server, identity and settings on connections of its own: its requests
   * never wait for one of this client's connections. For traffic that must get through while
   * this client is busy with bulk requests — leader election and lease renewals (client-go's
   * leader election also runs on a client of its own). Close it too.
   *
   * @example
   * ```ts
   * const leases = client.withOwnConnections();
   * await leases.api(Lease, 'kube-system').get('my-operator');
   * await leases.close();
   * ```
   */
  withOwnConnections(): Client {
    return new Client(this.config, { ...this.options, namespace: this.namespace });
  }
}

function nameOf(obj: KubeObject): string {
  const name = obj.metadata?.name;
  if (!name) throw new TypeError(`the ${obj.kind ?? 'object'} has no metadata.name`);
  return name;
}
