/**
 * Shared informers (client-go's `SharedInformerFactory`, controller-runtime's cache): one
 * informer — one list and one watch — per collection, however many controllers ask for it.
 */
import { setMaxListeners } from 'node:events';
import { parseFieldSelector } from '../../api/fields.js';
import { formatLabelSelector, parseLabelSelector } from '../../api/labels.js';
import type { Client } from '../../client/client.js';
import type { ResourceDescriptor } from '../../client/descriptor.js';
import {
  type FieldSelectorInput,
  fieldSelectorString,
  type LabelSelectorInput,
  labelSelectorString,
} from '../../client/options.js';
import type { KubeObject } from '../../client/types.js';
import { Informer, type InformerOptions, InformerSyncError, type WaitForSyncOptions } from './informer.js';
import type { IndexFunc } from './store.js';
import type { PartialObjectMetadata, Transform } from './transform.js';

/**
 * Which collection an informer of a factory watches, and how its store is indexed.
 *
 * @example
 * ```ts
 * informers.informer(Pod, { namespace: 'apps', labelSelector: { tier: 'web' }, indexers: { node: (p) => p.spec?.nodeName } });
 * ```
 */
export interface InformerRequest<T> {
  /** Namespace to watch (default `''`: all namespaces). Ignored for cluster-scoped kinds. */
  namespace?: string;
  labelSelector?: LabelSelectorInput;
  fieldSelector?: FieldSelectorInput;
  /** Indexes the caller needs; added to the shared store when missing. */
  indexers?: Record<string, IndexFunc<T>>;
  /**
   * Transform of the cached objects; only when the informer is first created (asking for a
   * shared informer with another transform throws). Default: the factory's.
   */
  transform?: Transform<T> | null;
}

/**
 * Options of an {@link InformerFactory}: defaults of every informer it makes.
 *
 * @example
 * ```ts
 * new InformerFactory(client, { watchList: false, onLifecycle: (e) => log.debug(e) });
 * ```
 */
export type InformerFactoryOptions = Omit<InformerOptions<KubeObject>, 'indexers' | 'transform'> & {
  /** Default transform (default `stripManagedFields`). */
  transform?: Transform<KubeObject> | null;
};

const canonicalLabels = (sel: LabelSelectorInput | undefined): string =>
  sel === undefined ? '' : formatLabelSelector(parseLabelSelector(labelSelectorString(sel)));
const canonicalFields = (sel: FieldSelectorInput | undefined): string => {
  if (sel === undefined) return '';
  // parseFieldSelector sorts the terms: equal selectors written differently share a key.
  return parseFieldSelector(fieldSelectorString(sel))
    .map((r) => `${r.field}${r.operator === '!=' ? '!=' : '='}${r.value}`)
    .join(',');
};

interface Entry {
  informer: Informer<KubeObject>;
  transform: Transform<KubeObject> | null | undefined;
  indexers: Map<string, IndexFunc<KubeObject>>;
}

/**
 * Makes and shares informers: asking twice for the same (kind, namespace, selectors,
 * metadata-only) gives the same informer. Informers asked for after `start()` start at once.
 *
 * @example
 * ```ts
 * const informers = new InformerFactory(client);
 * const foos = informers.informer(Foo);                       // all namespaces
 * const pods = informers.metadataInformer(Pod, { namespace: 'apps' });
 * informers.start();
 * await informers.waitForSync({ timeoutMs: 60_000 });
 * foos.store.list();
 * await informers.stop();
 * ```
 */
export class InformerFactory {
  private readonly entries = new Map<string, Entry>();
  private controller: AbortController | undefined;

  constructor(
    private readonly client: Client,
    private readonly defaults: InformerFactoryOptions = {},
  ) {}

  /** The shared informer of a collection. */
  informer<T extends KubeObject>(
    descriptor: ResourceDescriptor<T>,
    request: InformerRequest<T> = {},
  ): Informer<T> {
    return this.get(
      descriptor,
      request as unknown as InformerRequest<KubeObject>,
      false,
    ) as unknown as Informer<T>;
  }

  /** The shared metadata-only informer (`PartialObjectMetadata`) of a collection. */
  metadataInformer(
    descriptor: ResourceDescriptor,
    request: InformerRequest<PartialObjectMetadata> = {},
  ): Informer<PartialObjectMetadata> {
    return this.get(
      descriptor,
      request as InformerRequest<KubeObject>,
      true,
    ) as unknown as Informer<PartialObjectMetadata>;
  }

  /** Every informer made so far. */
  get informers(): readonly Informer<KubeObject>[] {
    return [...this.entries.values()].map((e) => e.informer);
  }

  /** Starts every informer, and every one made later, until `stop()` or `signal` aborts. */
  start(signal?: AbortSignal): void {
    if (!this.controller) {
      this.controller = new AbortController();
      // Every informer of the factory listens to it: a manager of many kinds is no leak.
      setMaxListeners(0, this.controller.signal);
      if (signal) {
        const c = this.controller;
        if (signal.aborted) c.abort(signal.reason);
        else signal.addEventListener('abort', () => c.abort(signal.reason), { once: true });
      }
    }
    for (const e of this.entries.values()) e.informer.start(this.controller.signal);
  }

  /**
   * Resolves when every informer has synced; otherwise rejects with an
   * {@link InformerSyncError} naming each one that did not, and why.
   */
  async waitForSync(options: WaitForSyncOptions = {}): Promise<void> {
    const informers = this.informers;
    const results = await Promise.allSettled(informers.map((i) => i.waitForSync(options)));
    const failures = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    if (failures.length === 0) return;
    const first = failures[0];
    if (failures.length === 1 && first instanceof InformerSyncError) throw first;
    const messages = failures.map((f) => (f instanceof Error ? f.message : String(f)));
    const reason = first instanceof InformerSyncError ? first.reason : 'timeout';
    throw new InformerSyncError(
      `${failures.length} of ${informers.length} informers did not sync:\n- ${messages.join('\n- ')}`,
      failures.map((f) => (f instanceof InformerSyncError ? f.informer : '?')).join(', '),
      reason,
      failures,
    );
  }

  /** Stops every informer and waits until they are all down. */
  async stop(): Promise<void> {
    this.controller?.abort(new Error('informer factory stopped'));
    await Promise.all(this.informers.map((i) => i.stop()));
  }

  /**
   * Stops a shared informer and forgets it (controller-runtime's `RemoveInformer`): for a kind
   * the server no longer serves (its CRD deleted or changed), so that it stops listing and
   * watching; asking for the same collection later makes a new informer. Every user of the
   * shared informer loses it: only remove informers no other controller reads.
   *
   * @example
   * ```ts
   * const widgets = informers.metadataInformer(Widget);
   * // … the Widget CRD was deleted:
   * await informers.remove(widgets);
   * ```
   */
  async remove(informer: Informer<KubeObject> | Informer<PartialObjectMetadata>): Promise<void> {
    for (const [key, entry] of this.entries) {
      if (entry.informer !== (informer as unknown)) continue;
      this.entries.delete(key);
      await entry.informer.stop();
      return;
    }
  }

  private get(descriptor: ResourceDescriptor, request: InformerRequest<KubeObject>, metadataOnly: boolean) {
    const namespace = request.namespace ?? '';
    const key = JSON.stringify([
      descriptor.group,
      descriptor.version,
      descriptor.kind,
      namespace,
      canonicalLabels(request.labelSelector),
      canonicalFields(request.fieldSelector),
      metadataOnly,
    ]);
    let entry = this.entries.get(key);
    if (!entry) {
      const transform = request.transform !== undefined ? request.transform : this.defaults.transform;
      const api = this.client.api(descriptor, namespace);
      const options: InformerOptions<KubeObject> = {
        ...this.defaults,
        ...(request.labelSelector !== undefined && { labelSelector: request.labelSelector }),
        ...(request.fieldSelector !== undefined && { fieldSelector: request.fieldSelector }),
        ...(transform !== undefined && { transform }),
        indexers: { ...request.indexers },
      };
      const informer = metadataOnly
        ? (Informer.metadata(
            api,
            options as InformerOptions<PartialObjectMetadata>,
          ) as unknown as Informer<KubeObject>)
        : new Informer(api, options);
      entry = {
        informer,
        transform: request.transform,
        indexers: new Map(Object.entries(request.indexers ?? {})),
      };
      this.entries.set(key, entry);
      if (this.controller) informer.start(this.controller.signal);
      return informer;
    }
    if (request.transform !== undefined && request.transform !== entry.transform) {
      throw new Error(
        `the shared informer of ${entry.informer.description} already exists with another transform`,
      );
    }
    for (const [name, fn] of Object.entries(request.indexers ?? {})) {
      const existing = entry.indexers.get(name);
      if (existing === fn) continue;
      if (existing !== undefined || entry.informer.store.hasIndex(name)) {
        throw new Error(
          `the shared informer of ${entry.informer.description} already has another index named ${JSON.stringify(name)}`,
        );
      }
      entry.informer.store.addIndex(name, fn);
      entry.indexers.set(name, fn);
    }
    return entry.informer;
  }
}
