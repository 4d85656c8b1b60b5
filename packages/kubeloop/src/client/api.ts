/**
 * The typed API of one kind in one namespace (kube-rs's `Api<K>`): every verb of the
 * Kubernetes API, the `status` and `scale` subresources, pagination and watch.
 */
import type { Scale } from 'kubernetes-types/autoscaling/v1.js';
import { ApiError, isNotFound, type Status } from '../api/status.js';
import { apiVersionOf, formatGvk, type ResolvedResource, type ResourceDescriptor } from './descriptor.js';
import type { Discovery } from './discovery.js';
import { decodeListBatches, type ListHead } from './list-stream.js';
import {
  ACCEPT_METADATA,
  ACCEPT_METADATA_LIST,
  type ApplyOptions,
  type DeleteCollectionOptions,
  type DeleteOptions,
  deleteBody,
  type GetOptions,
  type ListOptions,
  type ListStreamOptions,
  listQuery,
  type PatchOptions,
  type PatchType,
  query,
  type RequestOptions,
  selectorParams,
  type WatchOptions,
  type WriteOptions,
  writeParams,
} from './options.js';
import type { HttpRequest, Transport } from './transport/transport.js';
import type { ApplyConfiguration, JsonPatchOperation, KubeObject, MergePatch, ObjectList } from './types.js';
import { decodeWatchBatches, type LineDecoder, type WatchEvent } from './watch.js';

export type { Scale };

/** What a {@link ResourceApi} needs from its client. */
export interface ClientCore {
  readonly transport: Transport;
  readonly discovery: Discovery;
  /** Plural and scope of a descriptor, from the descriptor itself or discovery. */
  resolve(descriptor: ResourceDescriptor): Promise<ResolvedResource>;
}

const CONTENT_TYPES: Record<PatchType, string> = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

type Subresource = '' | 'status' | 'scale';

const nameOf = (obj: KubeObject, verb: string): string => {
  const name = obj.metadata?.name;
  if (!name) throw new TypeError(`${verb}: the object has no metadata.name`);
  return name;
};

/**
 * The API of one kind, bound to a namespace (or to all namespaces, or cluster-scoped). Get
 * one from `client.api(Kind, namespace)`.
 *
 * @example
 * ```ts
 * const cms = client.api(ConfigMap, 'default');
 * await cms.create({ metadata: { name: 'settings' }, data: { mode: 'fast' } });
 * await cms.patch('settings', { data: { mode: 'safe' } });
 * for await (const ev of cms.watch({ timeoutSeconds: 60 })) console.log(ev.type);
 * ```
 */
export class ResourceApi<T extends KubeObject> {
  /**
   * @param namespace The namespace of a namespaced kind (`''` = all namespaces: list and
   *   watch across them; single-object calls then take the object's namespace). Ignored for
   *   cluster-scoped kinds.
   */
  constructor(
    private readonly core: ClientCore,
    readonly descriptor: ResourceDescriptor<T>,
    readonly namespace: string,
  ) {}

  /** The same kind in another namespace (`''` = all namespaces). */
  inNamespace(namespace: string): ResourceApi<T> {
    return new ResourceApi(this.core, this.descriptor, namespace);
  }

  /** Reads one object. @throws ApiError 404 NotFound (see `isNotFound`). */
  async get(name: string, options: GetOptions = {}): Promise<T> {
    const path = await this.path(name, '', undefined, 'get');
    return this.json<T>(
      { method: 'GET', path: path + query({ resourceVersion: options.resourceVersion }) },
      options,
    );
  }

  /**
   * Lists objects, optionally filtered by selectors; one page when `limit` is set. Items carry
   * `apiVersion` and `kind` (a built-in list's items come without them, as from any
   * kube-apiserver; they are filled in, as kubectl's decoding does).
   */
  async list(options: ListOptions = {}): Promise<ObjectList<T>> {
    const path = await this.path(undefined, '', undefined, 'list');
    const list = await this.json<ObjectList<T>>(
      {
        method: 'GET',
        path: path + listQuery(options),
        ...(options.metadataOnly && { accept: ACCEPT_METADATA_LIST }),
      },
      options,
    );
    if (!options.metadataOnly && Array.isArray(list.items)) {
      const apiVersion = apiVersionOf(this.descriptor);
      for (const item of list.items as KubeObject[]) {
        if (item && typeof item === 'object' && !item.kind && !Object.isFrozen(item)) {
          item.apiVersion ??= apiVersion;
          item.kind = this.descriptor.kind;
        }
      }
    }
    return list;
  }

  /**
   * Lists page by page (`limit` per page, default 500), following `continue` tokens; every
   * page is consistent with the first one's resourceVersion. A token that expired mid-way
   * throws ApiError 410 (`isGone`): list again from the start.
   *
   * @example
   * ```ts
   * for await (const page of pods.listPages({ limit: 100 })) for (const pod of page.items) use(pod);
   * ```
   */
  async *listPages(options: ListOptions = {}): AsyncGenerator<ObjectList<T>, void, undefined> {
    let cont = options.continue;
    const first = !cont;
    let isFirst = true;
    do {
      const page = await this.list({
        ...options,
        limit: options.limit ?? 500,
        continue: cont,
        // resourceVersion and continue are exclusive: the token carries the revision.
        resourceVersion: first && isFirst ? options.resourceVersion : undefined,
        resourceVersionMatch: first && isFirst ? options.resourceVersionMatch : undefined,
      });
      isFirst = false;
      yield page;
      cont = page.metadata.continue || undefined;
    } while (cont);
  }

  /**
   * Lists like {@link list}, decoding the answer as it arrives: yields the items in batches and
   * returns the list's `metadata` (its `resourceVersion` and `continue`) at the end. For large
   * answers, such as a `resourceVersion: '0'` list of a whole collection, which a
   * kube-apiserver serves from its watch cache in one answer whatever the `limit`: the body is
   * never held whole, as text or as a tree.
   *
   * @example
   * ```ts
   * const it = pods.listBatches({ resourceVersion: '0' });
   * let r = await it.next();
   * for (; !r.done; r = await it.next()) for (const pod of r.value) use(pod);
   * console.log('as of', r.value.metadata.resourceVersion);
   * ```
   */
  async *listBatches(options: ListStreamOptions = {}): AsyncGenerator<T[], ListHead, undefined> {
    const path = await this.path(undefined, '', undefined, 'list');
    const req: HttpRequest = {
      method: 'GET',
      path: path + listQuery(options),
      signal: options.signal,
      timeoutMs: options.timeoutMs,
      ...(options.metadataOnly && { accept: ACCEPT_METADATA_LIST }),
    };
    const transport = this.core.transport;
    const res = await this.send(() => transport.stream(req));
    return yield* decodeListBatches<T>(
      res.body,
      { method: 'GET', url: transport.origin + req.path },
      {
        ...(options.lineDecoder && { decode: options.lineDecoder as LineDecoder<T> }),
        ...(!options.metadataOnly && {
          itemType: { apiVersion: apiVersionOf(this.descriptor), kind: this.descriptor.kind },
        }),
        ...(options.signal && { signal: options.signal }),
        closed: () => transport.isClosed,
      },
    );
  }

  /** Creates an object; `apiVersion` and `kind` are filled in when missing. */
  async create(obj: T, options: WriteOptions = {}): Promise<T> {
    const path = await this.path(undefined, '', obj, 'create');
    return this.json<T>(
      { method: 'POST', path: path + query(writeParams(options)), ...this.body(obj) },
      options,
    );
  }

  /** Replaces an object (PUT); with `metadata.resourceVersion` set, a stale copy fails with 409 Conflict. */
  async update(obj: T, options: WriteOptions = {}): Promise<T> {
    return this.put(obj, '', options);
  }

  /**
   * Patches an object. `type` picks the format (default `merge`): a JSON merge patch, a JSON
   * patch (list of operations), a strategic merge patch (built-in kinds only), or `apply`
   * (server-side apply; prefer {@link apply}).
   *
   * @example
   * ```ts
   * await deployments.patch('web', { spec: { replicas: 3 } });
   * await deployments.patch('web', [{ op: 'replace', path: '/spec/replicas', value: 3 }], { type: 'json' });
   * ```
   */
  patch(
    name: string,
    patch: readonly JsonPatchOperation[],
    options: PatchOptions & { type: 'json' },
  ): Promise<T>;
  patch(
    name: string,
    patch: Record<string, unknown>,
    options: PatchOptions & { type: 'strategic' },
  ): Promise<T>;
  patch(
    name: string,
    patch: ApplyConfiguration<T>,
    options: PatchOptions & { type: 'apply'; fieldManager: string },
  ): Promise<T>;
  patch(name: string, patch: MergePatch<T>, options?: PatchOptions & { type?: 'merge' }): Promise<T>;
  patch(name: string, patch: unknown, options: PatchOptions = {}): Promise<T> {
    return this.patchAt(name, '', patch, options);
  }

  /**
   * Server-side apply: sends the fields this manager wants (`application/apply-patch+yaml`);
   * the server merges them with what other managers own and creates the object if needed.
   *
   * @example
   * ```ts
   * await client.api(ConfigMap, 'default').apply(
   *   { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings' }, data: { mode: 'fast' } },
   *   { fieldManager: 'my-operator', force: true },
   * );
   * ```
   */
  async apply(obj: ApplyConfiguration<T> | T, options: ApplyOptions): Promise<T> {
    return this.applyAt(obj, '', options);
  }

  /**
   * Deletes an object. Answers the object when it still exists (finalizers pending, or kinds
   * that return it) or the server's `Status` otherwise.
   */
  async delete(name: string, options: DeleteOptions = {}): Promise<T | Status> {
    const path = await this.path(name, '', undefined, 'delete');
    const body = deleteBody(options);
    return this.json<T | Status>(
      {
        method: 'DELETE',
        path: path + query({ dryRun: options.dryRun ? 'All' : undefined }),
        ...(body !== undefined && { body, contentType: 'application/json' }),
      },
      options,
    );
  }

  /** Deletes every object matching the selectors (in the namespace, or cluster-wide). */
  async deleteCollection(options: DeleteCollectionOptions = {}): Promise<ObjectList<T> | Status> {
    const path = await this.path(undefined, '', undefined, 'deletecollection');
    const body = deleteBody(options);
    return this.json<ObjectList<T> | Status>(
      {
        method: 'DELETE',
        path:
          path +
          query({
            ...selectorParams(options),
            dryRun: options.dryRun ? 'All' : undefined,
            resourceVersion: options.resourceVersion,
            resourceVersionMatch: options.resourceVersionMatch,
            timeoutSeconds: options.timeoutSeconds,
          }),
        ...(body !== undefined && { body, contentType: 'application/json' }),
      },
      options,
    );
  }

  /**
   * Watches changes. The request starts with the first `next()`. The iteration ends when the
   * server ends the watch (`timeoutSeconds`) or `signal` aborts; a server ERROR event throws
   * its `ApiError` — 410 (`isGone`) means the resourceVersion is too old: list again.
   *
   * @example
   * ```ts
   * const { metadata } = await pods.list();
   * for await (const ev of pods.watch({ resourceVersion: metadata.resourceVersion, allowWatchBookmarks: true })) {
   *   if (ev.type === 'ADDED') console.log('new pod', ev.object.metadata?.name);
   * }
   * ```
   */
  watch(options: WatchOptions = {}): AsyncGenerator<WatchEvent<T>, void, undefined> {
    return this.watchStream(options);
  }

  /**
   * Watches changes like {@link watch}, delivering the same events in batches: all complete
   * events of each chunk the server sent. For consumers of many events (informers), which then
   * pay the cost of an asynchronous step per chunk instead of per event.
   *
   * @example
   * ```ts
   * for await (const batch of pods.watchBatches({ sendInitialEvents: true })) for (const ev of batch) use(ev);
   * ```
   */
  watchBatches(options: WatchOptions = {}): AsyncGenerator<WatchEvent<T>[], void, undefined> {
    return this.watchBatchStream(options);
  }

  /** Reads the `status` subresource (the whole object, as the server returns it). */
  async getStatus(name: string, options: RequestOptions = {}): Promise<T> {
    const path = await this.path(name, 'status', undefined, 'get');
    return this.json<T>({ method: 'GET', path }, options);
  }

  /** Writes the `status` subresource: only `status` changes. */
  async updateStatus(obj: T, options: WriteOptions = {}): Promise<T> {
    return this.put(obj, 'status', options);
  }

  /** Patches the `status` subresource (the patch is of the whole object, e.g. `{ status: {…} }`). */
  patchStatus(
    name: string,
    patch: readonly JsonPatchOperation[],
    options: PatchOptions & { type: 'json' },
  ): Promise<T>;
  patchStatus(
    name: string,
    patch: Record<string, unknown>,
    options: PatchOptions & { type: 'strategic' },
  ): Promise<T>;
  patchStatus(name: string, patch: MergePatch<T>, options?: PatchOptions & { type?: 'merge' }): Promise<T>;
  patchStatus(name: string, patch: unknown, options: PatchOptions = {}): Promise<T> {
    return this.patchAt(name, 'status', patch, options);
  }

  /** Server-side apply of the `status` subresource. */
  async applyStatus(obj: ApplyConfiguration<T> | T, options: ApplyOptions): Promise<T> {
    return this.applyAt(obj, 'status', options);
  }

  /** Reads the `scale` subresource (`autoscaling/v1` Scale). */
  async getScale(name: string, options: RequestOptions = {}): Promise<Scale> {
    const path = await this.path(name, 'scale', undefined, 'get');
    return this.json<Scale>({ method: 'GET', path }, options);
  }

  /** Writes the `scale` subresource (`spec.replicas`). */
  async updateScale(name: string, scale: Scale, options: WriteOptions = {}): Promise<Scale> {
    const path = await this.path(name, 'scale', undefined, 'update');
    const body = { apiVersion: 'autoscaling/v1', kind: 'Scale', ...scale };
    return this.json<Scale>(
      {
        method: 'PUT',
        path: path + query(writeParams(options)),
        body: JSON.stringify(body),
        contentType: 'application/json',
      },
      options,
    );
  }

  /** Patches the `scale` subresource, e.g. `{ spec: { replicas: 3 } }`. */
  async patchScale(name: string, patch: MergePatch<Scale>, options: WriteOptions = {}): Promise<Scale> {
    const path = await this.path(name, 'scale', undefined, 'patch');
    return this.json<Scale>(
      {
        method: 'PATCH',
        path: path + query(writeParams(options)),
        body: JSON.stringify(patch),
        contentType: CONTENT_TYPES.merge,
      },
      options,
    );
  }

  private async put(obj: T, sub: Subresource, options: WriteOptions): Promise<T> {
    const name = nameOf(obj, 'update');
    const path = await this.path(name, sub, obj, 'update');
    return this.json<T>(
      { method: 'PUT', path: path + query(writeParams(options)), ...this.body(obj) },
      options,
    );
  }

  private async patchAt(name: string, sub: Subresource, patch: unknown, options: PatchOptions): Promise<T> {
    const type = options.type ?? 'merge';
    if (type === 'apply' && !options.fieldManager) {
      throw new TypeError('server-side apply needs a fieldManager');
    }
    const path = await this.path(name, sub, undefined, 'patch');
    return this.json<T>(
      {
        method: 'PATCH',
        path:
          path +
          query({ ...writeParams(options), force: type === 'apply' && options.force ? true : undefined }),
        body: JSON.stringify(patch),
        contentType: CONTENT_TYPES[type],
      },
      options,
    );
  }

  private async applyAt(obj: ApplyConfiguration<T> | T, sub: Subresource, options: ApplyOptions): Promise<T> {
    if (!options.fieldManager) throw new TypeError('server-side apply needs a fieldManager');
    const name = nameOf(obj as KubeObject, 'apply');
    const path = await this.path(name, sub, obj as KubeObject, 'apply');
    const d = this.descriptor;
    // Apply configurations must name their type; fill it in as kubectl does from the object.
    const body = {
      apiVersion: (obj as KubeObject).apiVersion || apiVersionOf(d),
      kind: (obj as KubeObject).kind || d.kind,
      ...obj,
    };
    return this.json<T>(
      {
        method: 'PATCH',
        path:
          path +
          query({
            ...writeParams(options),
            force: options.force ? true : undefined,
          }),
        // JSON is YAML: the apply content type takes it as is, as client-go sends it.
        body: JSON.stringify(body),
        contentType: CONTENT_TYPES.apply,
      },
      options,
    );
  }

  private async *watchStream(options: WatchOptions): AsyncGenerator<WatchEvent<T>, void, undefined> {
    for await (const batch of this.watchBatchStream(options)) yield* batch;
  }

  private async *watchBatchStream(options: WatchOptions): AsyncGenerator<WatchEvent<T>[], void, undefined> {
    const path = await this.path(undefined, '', undefined, 'watch');
    const initial = options.sendInitialEvents === true;
    const req: HttpRequest = {
      method: 'GET',
      path:
        path +
        query({
          watch: true,
          ...selectorParams(options),
          resourceVersion: options.resourceVersion,
          resourceVersionMatch: options.resourceVersionMatch ?? (initial ? 'NotOlderThan' : undefined),
          allowWatchBookmarks: options.allowWatchBookmarks || initial ? true : undefined,
          sendInitialEvents: options.sendInitialEvents,
          timeoutSeconds: options.timeoutSeconds,
        }),
      signal: options.signal,
      timeoutMs: options.timeoutMs,
      ...(options.metadataOnly && { accept: ACCEPT_METADATA }),
    };
    const transport = this.core.transport;
    let res: Awaited<ReturnType<Transport['stream']>>;
    try {
      res = await this.send(() => transport.stream(req));
    } catch (err) {
      if (options.signal?.aborted) return;
      throw err;
    }
    options.onConnect?.();
    yield* decodeWatchBatches<T>(
      res.body,
      { method: 'GET', url: transport.origin + req.path },
      options.signal,
      () => transport.isClosed,
      options.lineDecoder as LineDecoder<T> | undefined,
    );
  }

  private body(obj: KubeObject): { body: string; contentType: string } {
    const d = this.descriptor;
    const full = obj.apiVersion && obj.kind ? obj : { apiVersion: apiVersionOf(d), kind: d.kind, ...obj };
    return { body: JSON.stringify(full), contentType: 'application/json' };
  }

  /**
   * The URL path of a request. Single-object requests of a namespaced kind use the API's
   * namespace, else the object's; lists and watches use the API's (`''` = all namespaces).
   */
  private path(
    name: string | undefined,
    sub: Subresource,
    obj: KubeObject | undefined,
    verb: string,
  ): string | Promise<string> {
    if (name !== undefined && name === '') throw new TypeError(`${verb}: resource name may not be empty`);
    const d = this.descriptor;
    // A descriptor that gives its plural and scope needs no discovery: its path is made at
    // once (a promise per request was a measurable share of a small request's allocations).
    if (d.plural !== undefined && d.namespaced !== undefined)
      return this.pathOf(d as ResolvedResource, name, sub, obj, verb);
    // A kind discovery has loaded (a custom resource, after its first request) has its path
    // made at once too; a descriptor giving only one of plural and scope still goes through
    // resolve, which combines the two.
    if (d.plural === undefined && d.namespaced === undefined) {
      const known = this.core.discovery.known(d);
      if (known !== undefined) return this.pathOf(known, name, sub, obj, verb);
    }
    return this.core.resolve(d).then((r) => this.pathOf(r, name, sub, obj, verb));
  }

  private pathOf(
    r: ResolvedResource,
    name: string | undefined,
    sub: Subresource,
    obj: KubeObject | undefined,
    verb: string,
  ): string {
    let ns = '';
    if (r.namespaced) {
      const namespace = this.namespace || obj?.metadata?.namespace || '';
      const needsOne = name !== undefined || verb === 'create';
      if (namespace) ns = `/namespaces/${encodeURIComponent(namespace)}`;
      else if (needsOne) {
        throw new TypeError(
          `${verb}: ${formatGvk(r)} is namespaced; give a namespace (the API is for all namespaces)`,
        );
      }
    }
    const prefix = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
    const tail = name !== undefined ? `/${encodeURIComponent(name)}${sub ? `/${sub}` : ''}` : '';
    return `${prefix}${ns}/${r.plural}${tail}`;
  }

  private async json<R>(req: HttpRequest, options: RequestOptions): Promise<R> {
    req.signal = options.signal;
    req.timeoutMs = options.timeoutMs;
    const res = await this.send(() => this.core.transport.request(req));
    try {
      return JSON.parse(res.body) as R;
    } catch (err) {
      throw new ApiError({
        code: res.status,
        reason: 'InternalError',
        message: `${req.method} ${req.path}: the server's answer is not JSON: ${(err as Error).message}`,
      });
    }
  }

  /**
   * Runs a request; a 404 that is about the URL rather than an object (no `details.name`) means
   * the kind is not served any more, so discovery forgets what it knew about it.
   */
  private async send<R>(fn: () => Promise<R>): Promise<R> {
    try {
      return await fn();
    } catch (err) {
      if (isNotFound(err) && !(err as ApiError).details?.name)
        this.core.discovery.invalidate(this.descriptor);
      throw err;
    }
  }
}
