import { ApiError } from 'kubeloop/api';
import type { CompiledSchema, CustomResourceDefinition, JSONSchemaProps } from 'kubeloop/schema';
import type { Registry as PromRegistry } from 'prom-client';
import {
  createWebhookCaller,
  type WebhookCaller,
  type WebhookClientConfig,
} from '../admission/webhook/client.js';
import type { RestStorage } from '../registry/rest.js';
import type { ResourceType } from '../registry/types.js';
import { collectionPrefix } from '../storage/store.js';
import type { StoreEvent, Unsubscribe } from '../storage/types.js';
import { clone, deepEqual, isObject, type Obj, timestamp } from '../util/object.js';
import { convertAsWritten } from './conversion-feed.js';
import { ConversionMetrics } from './conversion-metrics.js';
import { attachConversionWebhook } from './conversion-webhook.js';
import { crdSupport } from './schema-module.js';

/** The finalizer that makes a CRD wait until all its custom resources are deleted. */
export const CRD_CLEANUP_FINALIZER = 'customresourcecleanup.apiextensions.k8s.io';

const CRD_PREFIX = collectionPrefix('apiextensions.k8s.io', 'customresourcedefinitions');

type Names = {
  plural: string;
  singular?: string;
  kind: string;
  listKind?: string;
  shortNames?: string[];
  categories?: string[];
};

interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  lastTransitionTime?: string;
}

type Crd = CustomResourceDefinition & { metadata: Obj; status?: Obj };

/** What one CRD serves: its types, and the inputs they were built from (to skip identical rebuilds). */
interface Served {
  types: ResourceType[];
  spec: unknown;
  names: unknown;
}

/**
 * The controllers of apiextensions-apiserver: naming (`NamesAccepted`, name conflicts within a
 * group), establishing (the resource is served and listed in discovery), API approval of
 * protected groups, `storedVersions`, and the finalizer that deletes every custom resource
 * before its CRD goes away.
 */
export class CrdController {
  /** CRD name → the served types registered for it. */
  private readonly served = new Map<string, Served>();
  /** CRD name → its compiled schemas by their JSON (a status write must not recompile CEL programs). */
  private readonly compiled = new Map<string, Map<string, CompiledSchema>>();
  /** CRD name → the watch of its custom resources while its deletion waits for them to go. */
  private readonly cleanupWatches = new Map<string, Unsubscribe>();
  /** CRD name → its custom resources converted as they are written (a conversion webhook's CRD). */
  private readonly conversionFeeds = new Map<string, Unsubscribe>();
  private readonly pending = new Set<string>();
  private unsubscribe: Unsubscribe | undefined;
  private running = false;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Calls conversion webhooks (created with the first CRD that has one). */
  private caller: WebhookCaller | undefined;
  private conversionMetrics: ConversionMetrics | undefined;

  constructor(
    private readonly rest: RestStorage,
    private readonly log?: (level: 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void,
  ) {}

  private get crdType(): ResourceType {
    return this.rest.registry.lookup('apiextensions.k8s.io', 'v1', 'customresourcedefinitions')!;
  }

  /** Records conversion webhook calls in the control plane's metrics (`/metrics`). */
  recordConversionsIn(registry: PromRegistry): void {
    this.conversionMetrics = new ConversionMetrics(registry);
  }

  /**
   * Serves every stored CRD at once (a restart must not lose custom resources), then follows
   * changes. Resolves once the stored CRDs are served (their modules load first, when there are any).
   */
  async start(): Promise<void> {
    let snapshot = this.rest.store.list(CRD_PREFIX);
    if (snapshot.items.length > 0 && !crdSupport.loaded) {
      await crdSupport.load();
      if (this.stopped) return;
      snapshot = this.rest.store.list(CRD_PREFIX);
    }
    for (const item of snapshot.items) this.serve(item.object as unknown as Crd);
    for (const item of snapshot.items) this.enqueue(nameOf(item.object as Obj));
    this.unsubscribe = this.rest.store.watch(CRD_PREFIX, snapshot.revision, (ev: StoreEvent) => {
      const crd = ev.object.object as unknown as Crd;
      const name = nameOf(crd as unknown as Obj);
      if (ev.type === 'DELETED') {
        this.unserve(name);
        this.compiled.delete(name);
        this.cleanupWatches.get(name)?.();
        this.cleanupWatches.delete(name);
      } else if (crdSupport.loaded) {
        // Serving follows the CRD synchronously: a client that created a CRD may use it next.
        this.serve(crd);
        this.enqueue(name);
      } else {
        // Written past the registry (which loads the CRD modules before any CRD write): served
        // as stored once they are loaded.
        void crdSupport.load()?.then(() => {
          const now = this.rest.store.get(this.rest.key(this.crdType, undefined, name));
          if (this.stopped || !now) return;
          this.serve(now.object as unknown as Crd);
          this.enqueue(name);
        });
      }
      // The naming controller looks at the whole group again: a name one CRD gave up may
      // now be free for another.
      this.enqueueGroup(crd.spec?.group, name);
    });
  }

  stop(): void {
    this.stopped = true;
    this.unsubscribe?.();
    for (const u of this.cleanupWatches.values()) u();
    this.cleanupWatches.clear();
    for (const u of this.conversionFeeds.values()) u();
    this.conversionFeeds.clear();
    if (this.timer) clearTimeout(this.timer);
  }

  /** Admission: no new custom resources while their CRD is being deleted. */
  admitCreate(t: ResourceType): void {
    if (!t.custom) return;
    for (const [name, served] of this.served) {
      if (!served.types.includes(t)) continue;
      const crd = this.rest.store.get(this.rest.key(this.crdType, undefined, name));
      if ((crd?.object.metadata as Obj | undefined)?.deletionTimestamp) {
        throw new ApiError({
          code: 405,
          reason: 'MethodNotAllowed',
          message: 'create not allowed while custom resource definition is terminating',
        });
      }
    }
  }

  private enqueue(name: string): void {
    this.pending.add(name);
    this.schedule(0);
  }

  private enqueueGroup(group: string | undefined, except: string): void {
    if (!group) return;
    for (const item of this.rest.store.list(CRD_PREFIX).items) {
      const c = item.object as unknown as Crd;
      const name = nameOf(c as unknown as Obj);
      if (name !== except && c.spec?.group === group) this.enqueue(name);
    }
  }

  private schedule(delayMs: number): void {
    if (this.stopped || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.drain();
    }, delayMs);
    this.timer.unref();
  }

  private async drain(): Promise<void> {
    if (this.running || this.stopped) return;
    this.running = true;
    let retry = false;
    try {
      for (const name of [...this.pending]) {
        this.pending.delete(name);
        try {
          await this.reconcile(name);
        } catch (err) {
          this.pending.add(name);
          retry = true;
          if (!(err instanceof ApiError && err.code === 409)) {
            this.log?.('error', 'CRD reconcile failed', { crd: name, err: String(err) });
          }
        }
      }
    } finally {
      this.running = false;
    }
    if (retry) this.schedule(50);
    else if (this.pending.size > 0) this.schedule(0);
  }

  /**
   * The names other CRDs of the group hold (`getAcceptedNamesForGroup`): their accepted names,
   * plus the names of what is served already (a CRD served before its status was written).
   */
  private claimedNames(group: string, self: string): { resources: Set<string>; kinds: Set<string> } {
    const resources = new Set<string>();
    const kinds = new Set<string>();
    const add = (n: Partial<Names> | undefined) => {
      if (!n) return;
      for (const r of [n.plural, n.singular, ...(n.shortNames ?? [])]) if (r) resources.add(r);
      for (const k of [n.kind, n.listKind]) if (k) kinds.add(k);
    };
    for (const item of this.rest.store.list(CRD_PREFIX).items) {
      const c = item.object as unknown as Crd;
      if (c.spec?.group !== group) continue;
      const status = c.status;
      add(isObject(status?.acceptedNames) ? (status.acceptedNames as Partial<Names>) : undefined);
    }
    for (const [name, s] of this.served) {
      if (name === self) continue;
      const t = s.types[0];
      if (!t || t.group !== group) continue;
      add({
        plural: t.resource,
        singular: t.singular,
        shortNames: [...t.shortNames],
        kind: t.kind,
        listKind: t.listKind,
      });
    }
    return { resources, kinds };
  }

  /**
   * The naming controller's `calculateNamesAndConditions`: every requested name that is the one
   * already accepted, or not claimed by another CRD of the group, is accepted; the last conflict
   * found is the condition's reason.
   */
  private namesFor(crd: Crd): { accepted: Names; namesAccepted: Condition } {
    const name = nameOf(crd as unknown as Obj);
    const requested = crd.spec.names as Names;
    const acceptedBefore = (
      isObject(crd.status?.acceptedNames) ? crd.status.acceptedNames : {}
    ) as Partial<Names>;
    // The group's names include the CRD's own accepted ones: a name it holds is "fresh" only in
    // the role it holds it in, as in kube.
    const { resources, kinds } = this.claimedNames(crd.spec.group, name);
    const fresh = (wanted: string | undefined, accepted: string | undefined, used: Set<string>): boolean =>
      wanted === accepted || !used.has(wanted ?? '');
    const next: Partial<Names> = { ...acceptedBefore };
    let conflict: { reason: string; message: string } | undefined;
    const inUse = (n: string) => `"${n}" is already in use`;

    if (fresh(requested.plural, acceptedBefore.plural, resources)) next.plural = requested.plural;
    else conflict = { reason: 'PluralConflict', message: inUse(requested.plural) };
    if (fresh(requested.singular, acceptedBefore.singular, resources)) next.singular = requested.singular;
    else conflict = { reason: 'SingularConflict', message: inUse(requested.singular ?? '') };
    if (!deepEqual(requested.shortNames ?? [], acceptedBefore.shortNames ?? [])) {
      const mine = new Set(acceptedBefore.shortNames ?? []);
      const taken = (requested.shortNames ?? []).filter((s) => !mine.has(s) && resources.has(s));
      if (taken.length === 0) next.shortNames = requested.shortNames;
      else
        conflict = {
          reason: 'ShortNamesConflict',
          // utilerrors.NewAggregate: one error as is, several as `[a, b]`.
          message: taken.length === 1 ? inUse(taken[0]!) : `[${taken.map(inUse).join(', ')}]`,
        };
    }
    if (fresh(requested.kind, acceptedBefore.kind, kinds)) next.kind = requested.kind;
    else conflict = { reason: 'KindConflict', message: inUse(requested.kind) };
    if (fresh(requested.listKind, acceptedBefore.listKind, kinds)) next.listKind = requested.listKind;
    else conflict = { reason: 'ListKindConflict', message: inUse(requested.listKind ?? '') };
    if (requested.categories !== undefined) next.categories = requested.categories;
    else delete next.categories;
    if (next.shortNames !== undefined && next.shortNames.length === 0) delete next.shortNames;

    const accepted = { plural: '', kind: '', ...next } as Names;
    return {
      accepted,
      namesAccepted: conflict
        ? { type: 'NamesAccepted', status: 'False', ...conflict }
        : { type: 'NamesAccepted', status: 'True', reason: 'NoConflicts', message: 'no conflicts found' },
    };
  }

  /**
   * Registers (or refreshes) the served versions of a CRD: an established CRD is served under its
   * accepted names; a new one as soon as its names are free, before its status says so.
   */
  private serve(crd: Crd): void {
    const name = nameOf(crd as unknown as Obj);
    if (!crd.spec?.names?.plural || !Array.isArray(crd.spec.versions)) return;
    const established = conditionOf(crd, 'Established')?.status === 'True';
    let names: Obj;
    if (established && isObject(crd.status?.acceptedNames) && crd.status.acceptedNames.plural) {
      names = crd.status.acceptedNames;
    } else {
      const { accepted, namesAccepted } = this.namesFor(crd);
      if (namesAccepted.status !== 'True') {
        this.unserve(name);
        return;
      }
      names = accepted as unknown as Obj;
    }
    const before = this.served.get(name);
    if (before && before.spec === crd.spec && deepEqual(before.names, names)) return;
    if (before && deepEqual(before.spec, crd.spec) && deepEqual(before.names, names)) {
      before.spec = crd.spec;
      return;
    }
    let types: ResourceType[];
    try {
      types = crdSupport.get().customResourceTypes(crd, names, (schema) => this.compile(name, schema));
    } catch (err) {
      this.log?.('error', 'CRD cannot be served', { crd: name, err: String(err) });
      return;
    }
    const webhook = crd.spec.conversion?.strategy === 'Webhook' ? crd.spec.conversion.webhook : undefined;
    if (webhook) {
      this.caller ??= createWebhookCaller(this.rest.store);
      for (const t of types)
        attachConversionWebhook(t, {
          clientConfig: (webhook.clientConfig ?? {}) as WebhookClientConfig,
          conversionReviewVersions: webhook.conversionReviewVersions ?? [],
          caller: this.caller,
          crdName: name,
          observe: (o) => this.conversionMetrics?.observe(o),
        });
    }
    const reg = this.rest.registry;
    // Registered afresh in kube-aware version order: discovery lists a group's versions in
    // registration order, and the first one is the preferred version kubectl uses.
    for (const t of before?.types ?? []) reg.unregister(t.group, t.version, t.resource);
    reg.register(...[...types].sort((a, b) => compareKubeAwareVersions(a.version, b.version)));
    this.served.set(name, { types, spec: crd.spec, names });
    this.conversionFeeds.get(name)?.();
    if (webhook) this.conversionFeeds.set(name, convertAsWritten(this.rest.store, types));
    else this.conversionFeeds.delete(name);
  }

  /** The compiled schema of a CRD version, reused while the schema's JSON stays the same. */
  private compile(crdName: string, schema: JSONSchemaProps): CompiledSchema {
    const json = JSON.stringify(schema);
    let cache = this.compiled.get(crdName);
    if (!cache) {
      cache = new Map();
      this.compiled.set(crdName, cache);
    }
    let c = cache.get(json);
    if (!c) {
      c = crdSupport.get().schema.compileSchema(schema, { isResourceRoot: true });
      // Keep only a few versions' schemas: an old schema is of no use once the CRD changed.
      if (cache.size >= 16) cache.clear();
      cache.set(json, c);
    }
    return c;
  }

  private unserve(name: string): void {
    this.conversionFeeds.get(name)?.();
    this.conversionFeeds.delete(name);
    for (const t of this.served.get(name)?.types ?? [])
      this.rest.registry.unregister(t.group, t.version, t.resource);
    this.served.delete(name);
  }

  /** Brings one CRD's status in line. */
  private async reconcile(name: string): Promise<void> {
    const stored = this.rest.store.get(this.rest.key(this.crdType, undefined, name));
    if (!stored) return;
    const crd = clone(stored.object) as unknown as Crd;
    if (crd.metadata.deletionTimestamp) return this.finalize(crd);

    const status: Obj = clone(crd.status ?? {});
    const conditions = (Array.isArray(status.conditions) ? status.conditions : []) as Condition[];
    const now = timestamp();
    const set = (c: Condition) => setCondition(conditions, c, now);

    const approval = approvalCondition(crd);
    if (approval) set(approval);

    const { accepted, namesAccepted } = this.namesFor(crd);
    status.acceptedNames = accepted;
    set(namesAccepted);
    const established = conditions.find((c) => c.type === 'Established');
    if (namesAccepted.status === 'True') {
      // The establishing controller: once names are accepted the resource is served for good.
      if (established?.status !== 'True')
        set({
          type: 'Established',
          status: 'True',
          reason: 'InitialNamesAccepted',
          message: 'the initial names have been accepted',
        });
    } else if (!established) {
      set({
        type: 'Established',
        status: 'False',
        reason: 'NotAccepted',
        message: 'not all names are accepted',
      });
    }
    const storage = crd.spec.versions.find((v) => v.storage)?.name;
    const storedVersions = Array.isArray(status.storedVersions) ? (status.storedVersions as string[]) : [];
    if (storage && !storedVersions.includes(storage)) storedVersions.push(storage);
    status.storedVersions = storedVersions;
    status.conditions = conditions;
    if (deepEqual(status, crd.status ?? {})) return;
    const next = { ...(crd as unknown as Obj), status };
    const written = await this.rest.update(this.crdType, undefined, name, next, 'status', { dryRun: false });
    this.serve(written.object as unknown as Crd);
  }

  /**
   * The CRD finalizer: marks the CRD Terminating, deletes its custom resources (each deletion
   * honours the resource's own finalizers), and once none is left lets the CRD go.
   */
  private async finalize(crd: Crd): Promise<void> {
    const name = nameOf(crd as unknown as Obj);
    const finalizers = Array.isArray(crd.metadata.finalizers) ? (crd.metadata.finalizers as string[]) : [];
    if (!finalizers.includes(CRD_CLEANUP_FINALIZER)) return;
    const served = this.served.get(name)?.types ?? [];
    const t = served.find((x) => x.custom?.storageVersion === x.version) ?? served[0];
    const wasEstablished = conditionOf(crd, 'Established')?.status === 'True';

    let done: Condition;
    if (t && wasEstablished) {
      await this.setTerminating(crd, {
        type: 'Terminating',
        status: 'True',
        reason: 'InstanceDeletionInProgress',
        message: 'CustomResource deletion is in progress',
      });
      const { items } = this.rest.list(t, undefined, {});
      for (const item of items) {
        const m = item.object.metadata as Obj;
        if (m.deletionTimestamp) continue;
        try {
          await this.rest.delete(t, m.namespace as string | undefined, String(m.name), {}, { dryRun: false });
        } catch (err) {
          if (!(err instanceof ApiError && (err.code === 404 || err.code === 409))) throw err;
        }
      }
      const left = this.rest.list(t, undefined, {});
      if (left.items.length > 0) {
        // Resources with finalizers of their own: look again whenever one of them changes.
        if (!this.cleanupWatches.has(name)) {
          const prefix = collectionPrefix(t.group, t.resource);
          this.cleanupWatches.set(
            name,
            this.rest.store.watch(prefix, Number(left.resourceVersion), () => this.enqueue(name)),
          );
        }
        return;
      }
      done = {
        type: 'Terminating',
        status: 'False',
        reason: 'InstanceDeletionCompleted',
        message: 'removed all instances',
      };
    } else {
      done = {
        type: 'Terminating',
        status: 'False',
        reason: 'NeverEstablished',
        message: 'resource was never established',
      };
    }
    this.cleanupWatches.get(name)?.();
    this.cleanupWatches.delete(name);
    await this.rest.patch(this.crdType, undefined, name, undefined, { dryRun: false }, (current) => {
      const m = current.metadata as Obj;
      const status = isObject(current.status) ? current.status : {};
      const conditions = (Array.isArray(status.conditions) ? status.conditions : []) as Condition[];
      setCondition(conditions, done, timestamp());
      current.status = { ...status, conditions };
      m.finalizers = (Array.isArray(m.finalizers) ? (m.finalizers as string[]) : []).filter(
        (f) => f !== CRD_CLEANUP_FINALIZER,
      );
      return current;
    });
  }

  private async setTerminating(crd: Crd, c: Condition): Promise<void> {
    const current = conditionOf(crd, 'Terminating');
    if (current && current.status === c.status && current.reason === c.reason) return;
    const status: Obj = clone(crd.status ?? {});
    const conditions = (Array.isArray(status.conditions) ? status.conditions : []) as Condition[];
    setCondition(conditions, c, timestamp());
    status.conditions = conditions;
    const written = await this.rest.update(
      this.crdType,
      undefined,
      nameOf(crd as unknown as Obj),
      { ...(crd as unknown as Obj), status },
      'status',
      { dryRun: false },
    );
    crd.status = clone(written.object.status) as Obj;
    crd.metadata.resourceVersion = (written.object.metadata as Obj).resourceVersion;
  }
}

/** `KubernetesAPIApprovalPolicyConformant` of a CRD in a protected group (`*.k8s.io`, `*.kubernetes.io`). */
function approvalCondition(crd: Crd): Condition | undefined {
  const { apiApprovalState, isProtectedCommunityGroup } = crdSupport.get().schema;
  if (!isProtectedCommunityGroup(crd.spec.group)) return undefined;
  const [state, reason] = apiApprovalState(crd.metadata.annotations as Record<string, string> | undefined);
  const type = 'KubernetesAPIApprovalPolicyConformant';
  switch (state) {
    case 'approved':
      return { type, status: 'True', reason: 'ApprovedAnnotation', message: reason };
    case 'bypassed':
      return { type, status: 'False', reason: 'UnapprovedAnnotation', message: reason };
    case 'missing':
      return { type, status: 'False', reason: 'MissingAnnotation', message: reason };
    default:
      return { type, status: 'False', reason: 'InvalidAnnotation', message: reason };
  }
}

/** `SetCRDCondition`: replaces a condition of the same type; the transition time moves only when the status does. */
function setCondition(conditions: Condition[], c: Condition, now: string): void {
  const i = conditions.findIndex((x) => x.type === c.type);
  const prev = conditions[i];
  const next = { ...c, lastTransitionTime: prev && prev.status === c.status ? prev.lastTransitionTime : now };
  if (i >= 0) conditions[i] = next;
  else conditions.push(next);
}

function conditionOf(crd: Crd, type: string): Condition | undefined {
  const conditions = crd.status?.conditions;
  return Array.isArray(conditions)
    ? (conditions as unknown as Condition[]).find((c) => isObject(c) && c.type === type)
    : undefined;
}

/**
 * apimachinery's `version.CompareKubeAwareVersionStrings`, as a sort order: GA before beta before
 * alpha, higher numbers first, then versions that do not look like kube versions, alphabetically.
 */
export function compareKubeAwareVersions(a: string, b: string): number {
  const parse = (v: string) => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) return undefined;
    return {
      major: Number(m[1]),
      stage: m[2] === 'alpha' ? 0 : m[2] === 'beta' ? 1 : 2,
      minor: Number(m[3] ?? 0),
    };
  };
  const x = parse(a);
  const y = parse(b);
  if (!x || !y) return x ? -1 : y ? 1 : a < b ? -1 : a > b ? 1 : 0;
  if (x.stage !== y.stage) return y.stage - x.stage;
  if (x.major !== y.major) return y.major - x.major;
  return y.minor - x.minor;
}

function nameOf(obj: Obj): string {
  return String((obj.metadata as Obj | undefined)?.name ?? '');
}
