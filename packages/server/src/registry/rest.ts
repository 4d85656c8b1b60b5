import { randomUUID } from 'node:crypto';
import {
  ApiError,
  type FieldSelector,
  fieldError,
  formatLabelSelector,
  type LabelSelector,
  labelSelectorFromObject,
  matchesFields,
  matchesLabels,
  type StatusCause,
  validateObjectMeta,
} from 'kubeloop/api';
import { presentAs, toStorageVersion } from '../apiextensions/conversion.js';
import { collectionPrefix, objectKey, StorageError, type Store } from '../storage/store.js';
import type { KubeObject, StoredObject } from '../storage/types.js';
import { clone, deepEqual, getPath, isObject, meta, type Obj, setPath, timestamp } from '../util/object.js';
import type { Registry } from './registry.js';
import { apiVersionOf, type ResourceType, storageOf } from './types.js';

/** What every write request carries besides its object. */
export interface WriteContext {
  /** `dryRun=All`: run everything, persist nothing. */
  dryRun: boolean;
  /**
   * Who writes, for `metadata.managedFields`: the request's `fieldManager`, else its User-Agent
   * prefix. Undefined for the server's own writes, which are not tracked.
   */
  fieldManager?: string;
  /** A server-side apply: its managed fields are already computed. */
  applied?: boolean;
}

/** Parsed list/watch parameters. */
export interface ListParams {
  labelSelector?: LabelSelector;
  fieldSelector?: FieldSelector;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
}

export interface ListOutcome {
  items: StoredObject[];
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

/** Parsed DeleteOptions (body or query). */
export interface DeleteParams {
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
}

/**
 * Hooks the composition root plugs in: admission (namespace lifecycle, webhooks later) and
 * server-side allocations such as Service cluster IPs.
 */
export interface RestHooks {
  /** Called before create/update/delete is persisted; throws ApiError to refuse. */
  admit?(
    op: 'CREATE' | 'UPDATE' | 'DELETE',
    t: ResourceType,
    obj: Obj,
    old: Obj | undefined,
  ): void | Promise<void>;
  /**
   * Whether a kubelet runs the node a pod is bound to: only then is a pod deleted gracefully
   * (it gets a `deletionTimestamp` and the kubelet removes it after the grace period). Pods on
   * other nodes go at once, as the pod garbage collector would remove them from a missing node.
   */
  hasKubelet?(nodeName: string): boolean;
  /** Fills server-allocated fields (Service clusterIP…) on create and update. */
  allocate?(t: ResourceType, obj: Obj, old: Obj | undefined): void;
  /**
   * Records `manager`'s create (`old` undefined) or update in `next.metadata.managedFields`,
   * after defaulting and before server allocations, as kube-apiserver's field manager sees them.
   */
  manageFields?(
    t: ResourceType,
    old: Obj | undefined,
    next: Obj,
    manager: string,
    subresource: 'status' | undefined,
  ): void;
  /** The same for a write to `/scale`: moves ownership of the replicas on `parent`. */
  manageScaleFields?(
    t: ResourceType,
    parent: Obj,
    oldScale: Obj,
    newScale: Obj,
    manager: string,
    applied: boolean,
  ): void;
}

interface Continue {
  rv: number;
  start: string;
}

const gr = (t: ResourceType) => ({ group: t.group, resource: t.resource });
const gk = (t: ResourceType) => ({ group: t.group, kind: t.kind });

/** Random suffix of `generateName` (apimachinery's alphabet: no vowels, no confusable digits). */
const NAME_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
function randomSuffix(n = 5): string {
  let s = '';
  for (let i = 0; i < n; i++) s += NAME_ALPHABET[Math.floor(Math.random() * NAME_ALPHABET.length)];
  return s;
}

/** ScaleREST's marker of a custom resource without spec replicas (the smallest int32). */
const ABSENT_SPEC_REPLICAS = -2147483648;

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

/**
 * The generic REST semantics of Kubernetes' registry (`generic/registry.Store` + strategies):
 * what create, update, patch, delete and list do to an object of any resource type. The HTTP
 * layer decodes requests into calls here; nothing in this class knows about HTTP.
 */
export class RestStorage {
  constructor(
    readonly store: Store,
    readonly registry: Registry,
    private readonly hooks: RestHooks = {},
  ) {}

  key(t: ResourceType, namespace: string | undefined, name: string): string {
    const { group, resource } = storageOf(t);
    return objectKey(group, resource, t.namespaced ? namespace : undefined, name);
  }

  get(t: ResourceType, namespace: string | undefined, name: string): StoredObject {
    const found = this.store.get(this.key(t, namespace, name));
    if (!found) throw ApiError.notFound(gr(t), name);
    return found;
  }

  /** The value of a field selector's field for an object of this type. */
  fieldValue(t: ResourceType, obj: Readonly<KubeObject>, field: string): string | undefined {
    const m = (obj.metadata ?? {}) as Obj;
    if (field === 'metadata.name') return String(m.name ?? '');
    if (field === 'metadata.namespace') return t.namespaced ? String(m.namespace ?? '') : '';
    const fn = t.behaviour.fieldSelectors?.[field];
    return fn ? fn(obj as Obj) : undefined;
  }

  /** Checks that every field of a selector is supported, as the apiserver's field label conversion does. */
  checkFieldSelector(t: ResourceType, sel: FieldSelector | undefined): void {
    for (const r of sel ?? []) {
      if (r.field === 'metadata.name') continue;
      // crConverter.ConvertFieldLabel: a cluster-scoped custom resource has no namespace field.
      if (r.field === 'metadata.namespace' && (t.namespaced || !t.custom)) continue;
      if (!t.behaviour.fieldSelectors?.[r.field]) {
        throw ApiError.badRequest(`field label not supported: ${r.field}`);
      }
    }
  }

  /** A predicate for the label and field selectors of a list or watch. */
  matcher(
    t: ResourceType,
    p: Pick<ListParams, 'labelSelector' | 'fieldSelector'>,
  ): ((o: StoredObject) => boolean) | undefined {
    const { labelSelector, fieldSelector } = p;
    if (!labelSelector?.length && !fieldSelector?.length) return undefined;
    return (o) => {
      const labels = (o.object.metadata as Obj | undefined)?.labels as Record<string, string> | undefined;
      if (labelSelector?.length && !matchesLabels(labelSelector, labels)) return false;
      if (fieldSelector?.length) {
        // Fields are selected as the request's kind spells them (regarding.name, not involvedObject.name).
        const view = t.storedAs ? presentAs(t, o).object : o.object;
        if (!matchesFields(fieldSelector, (f) => this.fieldValue(t, view, f))) return false;
      }
      return true;
    };
  }

  list(t: ResourceType, namespace: string | undefined, p: ListParams): ListOutcome {
    this.checkFieldSelector(t, p.fieldSelector);
    const { group, resource } = storageOf(t);
    const prefix = collectionPrefix(group, resource, t.namespaced ? namespace : undefined);
    const filter = this.matcher(t, p);
    let atRevision: number | undefined;
    let after: string | undefined;

    if (p.resourceVersionMatch && !p.resourceVersion) {
      throw ApiError.badRequest('resourceVersionMatch is forbidden unless resourceVersion is provided');
    }
    if (p.continue) {
      if (p.resourceVersion && p.resourceVersion !== '0') {
        throw ApiError.badRequest('specifying resource version is not allowed when using continue');
      }
      const token = decodeContinue(p.continue);
      // A negative revision (the token of an expired list's Status) continues at the latest state.
      if (token.rv >= 0 && token.rv < this.store.oldestRevision) {
        throw new ApiError({
          code: 410,
          reason: 'Expired',
          message:
            'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.',
          metadata: { continue: encodeContinue({ rv: -1, start: token.start }) },
        });
      }
      atRevision = token.rv < 0 ? undefined : token.rv;
      after = prefix + token.start;
    } else if (p.resourceVersion && p.resourceVersion !== '0') {
      const rv = parseResourceVersion(p.resourceVersion);
      if (p.resourceVersionMatch === 'Exact') {
        if (rv < this.store.oldestRevision) {
          throw ApiError.expired('The resourceVersion for the provided list is too old.');
        }
        if (rv > this.store.revision) throw tooLarge(rv, this.store.revision);
        atRevision = rv;
      } else if (p.resourceVersionMatch && p.resourceVersionMatch !== 'NotOlderThan') {
        throw ApiError.badRequest(`unknown resourceVersionMatch: ${p.resourceVersionMatch}`);
      } else if (rv > this.store.revision) {
        throw tooLarge(rv, this.store.revision);
      }
    }

    let result: ReturnType<Store['list']>;
    try {
      result = this.store.list(prefix, {
        ...(after !== undefined && { after }),
        ...(p.limit !== undefined && p.limit > 0 && { limit: p.limit }),
        ...(atRevision !== undefined && { atRevision }),
        ...(filter && { filter }),
      });
    } catch (err) {
      if (err instanceof StorageError && err.code === 'TooOld') throw ApiError.expired(err.message);
      throw err;
    }
    const out: ListOutcome = { items: result.items, resourceVersion: String(result.revision) };
    if (result.continueAfter !== undefined) {
      out.continue = encodeContinue({
        rv: result.revision,
        start: result.continueAfter.slice(prefix.length),
      });
      if (!filter) {
        out.remainingItemCount = this.store.count(prefix, result.continueAfter, result.revision);
      }
    }
    return out;
  }

  async create(
    t: ResourceType,
    namespace: string | undefined,
    input: Obj,
    ctx: WriteContext,
  ): Promise<StoredObject> {
    const obj = input;
    const m = meta(obj);
    checkNamespace(t, m, namespace);
    // Admission (NamespaceLifecycle, a terminating CRD) runs in the create handler before the
    // registry's BeforeCreate: before the name is generated and before validation, so an
    // invalid object in a missing or terminating namespace gets that namespace's answer.
    await this.hooks.admit?.('CREATE', t, obj, undefined);
    if ((m.name === undefined || m.name === '') && typeof m.generateName === 'string' && m.generateName) {
      m.name = `${m.generateName}${randomSuffix()}`;
    }
    m.uid = randomUUID();
    m.creationTimestamp = timestamp();
    delete m.deletionTimestamp;
    delete m.deletionGracePeriodSeconds;
    delete m.selfLink;
    if (t.generation) m.generation = 1;
    else delete m.generation;
    if (t.subresources.status) this.resetStatusOnCreate(t, obj);

    this.validate(
      t,
      obj,
      undefined,
      validateObjectMeta(m, { namespaced: t.namespaced, nameValidation: t.nameValidation, create: true }),
    );
    if (ctx.fieldManager !== undefined && !ctx.applied)
      this.hooks.manageFields?.(t, undefined, obj, ctx.fieldManager, undefined);
    this.hooks.allocate?.(t, obj, undefined);

    const name = m.name as string;
    const key = this.key(t, namespace, name);
    if (ctx.dryRun) {
      if (this.store.get(key)) throw ApiError.alreadyExists(gr(t), name);
      return dryRunResult(key, obj);
    }
    if (hasResourceVersion(m.resourceVersion)) {
      // etcd3's store refuses it with a plain error, which kube-apiserver answers as a 500
      // without a reason; a resourceVersion that is not a number is ignored.
      throw new ApiError({
        code: 500,
        message: 'resourceVersion should not be set on objects to be created',
      });
    }
    toStorageVersion(t, obj);
    try {
      return await this.store.create(key, obj).catch((err: unknown) => {
        if (!dropManagedFieldsIfTooLarge(err, obj, ctx)) throw err;
        return this.store.create(key, obj);
      });
    } catch (err) {
      throw this.storageError(err, t, name);
    }
  }

  /**
   * PUT. `subresource` selects the status strategy (only `status` changes). Returns the stored
   * object; an unchanged object is not written again.
   */
  async update(
    t: ResourceType,
    namespace: string | undefined,
    name: string,
    input: Obj,
    subresource: 'status' | undefined,
    ctx: WriteContext,
  ): Promise<StoredObject> {
    const m = meta(input);
    checkNamespace(t, m, namespace);
    if (m.name !== undefined && m.name !== name) {
      throw ApiError.badRequest(
        `the name of the object (${String(m.name)}) does not match the name on the URL (${name})`,
      );
    }
    const rv =
      typeof m.resourceVersion === 'string' && m.resourceVersion !== '' ? m.resourceVersion : undefined;
    if (rv === undefined && !t.allowUnconditionalUpdate) {
      throw ApiError.invalid(gk(t), name, [
        {
          reason: 'FieldValueInvalid',
          field: 'metadata.resourceVersion',
          message: 'Invalid value: 0x0: must be specified for an update',
        },
      ]);
    }
    const expected = rv === undefined ? undefined : parseResourceVersion(rv);
    return this.guaranteedUpdate(t, namespace, name, subresource, ctx, expected, () => clone(input));
  }

  /** PATCH: `apply` turns the current object into the desired one (merge, JSON or strategic patch). */
  async patch(
    t: ResourceType,
    namespace: string | undefined,
    name: string,
    subresource: 'status' | undefined,
    ctx: WriteContext,
    apply: (current: Obj) => Obj,
  ): Promise<StoredObject> {
    return this.guaranteedUpdate(t, namespace, name, subresource, ctx, undefined, (current) => {
      const next = apply(current);
      if (!isObject(next)) throw ApiError.badRequest('the patch did not produce an object');
      const m = meta(next);
      // The patch handler's namespace and name checks (`applyPatch`/`checkName`): a patched
      // object that moved or was renamed is a bad request, not a validation error.
      checkNamespace(t, m, namespace);
      const patchedName = typeof m.name === 'string' ? m.name : '';
      if (patchedName !== name) {
        throw ApiError.badRequest(
          `the name of the object (${patchedName}) does not match the name on the URL (${name})`,
        );
      }
      return next;
    });
  }

  /**
   * Reads `.spec.replicas` & co. as an `autoscaling/v1` Scale. A custom resource without spec
   * replicas has no Scale to read (ScaleREST.Get: a 500); `forUpdate` (the base of a patch) marks
   * the replicas as absent instead, as ScaleREST.Update does.
   */
  getScale(t: ResourceType, namespace: string | undefined, name: string, forUpdate = false): Obj {
    const stored = this.get(t, namespace, name);
    const scale = this.scaleOf(t, stored);
    const path = t.subresources.scale!.specReplicasPath;
    if (t.custom && getPath(stored.object as Obj, path) === undefined) {
      if (!forUpdate)
        throw ApiError.internal(`the spec replicas field ${JSON.stringify(path)} does not exist`);
      (scale.spec as Obj).replicas = ABSENT_SPEC_REPLICAS;
    }
    return scale;
  }

  /** Writes the replicas of a Scale to the object. */
  async updateScale(
    t: ResourceType,
    namespace: string | undefined,
    name: string,
    scale: Obj,
    ctx: WriteContext,
  ): Promise<Obj> {
    const scaleSpec = t.subresources.scale!;
    let replicas = isObject(scale.spec) ? scale.spec.replicas : undefined;
    if (t.custom) {
      // A custom resource's Scale is only decoded (an int32, 0 when absent); the resource's own
      // validation judges the value it lands in.
      if (replicas === ABSENT_SPEC_REPLICAS)
        throw ApiError.badRequest(
          `the spec replicas field ${JSON.stringify(scaleSpec.specReplicasPath)} cannot be empty`,
        );
      replicas ??= 0;
    }
    if (typeof replicas !== 'number' || !Number.isInteger(replicas) || (replicas < 0 && !t.custom)) {
      throw ApiError.invalid({ group: 'autoscaling', kind: 'Scale' }, name, [
        {
          reason: 'FieldValueInvalid',
          field: 'spec.replicas',
          message: `Invalid value: ${String(replicas)}: must be greater than or equal to 0`,
        },
      ]);
    }
    const m = isObject(scale.metadata) ? scale.metadata : {};
    const rv =
      typeof m.resourceVersion === 'string' && m.resourceVersion
        ? parseResourceVersion(m.resourceVersion)
        : undefined;
    // The Scale's managed fields are the parent's replicas owners: moved here, not recomputed.
    const parentCtx = { ...ctx, applied: true };
    const stored = await this.guaranteedUpdate(t, namespace, name, undefined, parentCtx, rv, (current) => {
      const oldScale =
        ctx.fieldManager !== undefined
          ? this.scaleOf(t, { key: '', object: current as KubeObject, revision: 0, json: '' })
          : undefined;
      setPath(current, scaleSpec.specReplicasPath, replicas);
      if (oldScale && ctx.fieldManager !== undefined)
        this.hooks.manageScaleFields?.(t, current, oldScale, scale, ctx.fieldManager, ctx.applied === true);
      return current;
    });
    return this.scaleOf(t, stored);
  }

  scaleOf(t: ResourceType, stored: StoredObject): Obj {
    const scaleSpec = t.subresources.scale!;
    const o = stored.object as Obj;
    const m = o.metadata as Obj;
    const sel = scaleSpec.labelSelectorPath ? getPath(o, scaleSpec.labelSelectorPath) : undefined;
    const selector =
      typeof sel === 'string'
        ? sel
        : isObject(sel)
          ? formatLabelSelector(labelSelectorFromObject(sel))
          : undefined;
    return {
      kind: 'Scale',
      apiVersion: 'autoscaling/v1',
      metadata: {
        name: m.name,
        ...(m.namespace !== undefined && { namespace: m.namespace }),
        uid: m.uid,
        resourceVersion: m.resourceVersion,
        creationTimestamp: m.creationTimestamp,
      },
      spec: { replicas: (getPath(o, scaleSpec.specReplicasPath) as number | undefined) ?? 0 },
      status: {
        replicas: (getPath(o, scaleSpec.statusReplicasPath) as number | undefined) ?? 0,
        ...(selector !== undefined && { selector }),
      },
    };
  }

  /**
   * DELETE. With finalizers left (or added by Foreground/Orphan propagation), the object only
   * gets `deletionTimestamp`; it disappears when its last finalizer is removed.
   */
  async delete(
    t: ResourceType,
    namespace: string | undefined,
    name: string,
    opts: DeleteParams,
    ctx: WriteContext,
  ): Promise<{ stored: StoredObject; deleted: boolean }> {
    const key = this.key(t, namespace, name);
    const current = this.get(t, namespace, name);
    const cm = current.object.metadata as Obj;
    const pre = opts.preconditions;
    if (pre?.uid && pre.uid !== cm.uid) {
      throw ApiError.conflict(
        gr(t),
        name,
        `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${String(cm.uid)}`,
      );
    }
    if (pre?.resourceVersion && pre.resourceVersion !== cm.resourceVersion) {
      throw ApiError.conflict(
        gr(t),
        name,
        `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${String(cm.resourceVersion)}`,
      );
    }
    await this.hooks.admit?.('DELETE', t, current.object as Obj, current.object as Obj);

    const finalizers = strings(cm.finalizers);
    const extra =
      opts.propagationPolicy === 'Foreground'
        ? 'foregroundDeletion'
        : opts.propagationPolicy === 'Orphan'
          ? 'orphan'
          : undefined;
    const wanted = [...finalizers];
    for (const f of [...(t.deletionFinalizers ?? []), ...(extra ? [extra] : [])])
      if (!wanted.includes(f)) wanted.push(f);
    const podGrace = this.podGracePeriod(t, current.object as Obj, opts);
    if (podGrace > 0) {
      let next: Obj | undefined;
      const existing =
        typeof cm.deletionGracePeriodSeconds === 'number' ? cm.deletionGracePeriodSeconds : undefined;
      if (!cm.deletionTimestamp || (existing !== undefined && podGrace < existing)) {
        // A second delete may only shorten the grace period (Kubernetes' BeforeDelete).
        const start = cm.deletionTimestamp
          ? Date.parse(String(cm.deletionTimestamp)) - (existing ?? 0) * 1000
          : Date.now();
        next = clone(current.object) as Obj;
        const nm = meta(next);
        nm.deletionTimestamp = timestamp(new Date(start + podGrace * 1000));
        nm.deletionGracePeriodSeconds = podGrace;
        if (wanted.length > 0) nm.finalizers = wanted;
      }
      if (!next) return { stored: current, deleted: false };
      if (ctx.dryRun) return { stored: dryRunResult(key, next), deleted: false };
      try {
        return { stored: await this.store.update(key, next, current.revision), deleted: false };
      } catch (err) {
        throw this.storageError(err, t, name);
      }
    }
    const graceful = this.gracefulDeletion(t, current.object as Obj);
    const isNamespace = t.group === '' && t.resource === 'namespaces';

    if (wanted.length > 0 || graceful) {
      if (cm.deletionTimestamp) return { stored: current, deleted: false };
      const next = clone(current.object) as Obj;
      const nm = meta(next);
      nm.deletionTimestamp = timestamp();
      nm.deletionGracePeriodSeconds = 0;
      if (wanted.length > 0) nm.finalizers = wanted;
      if (typeof nm.generation === 'number' && nm.generation > 0) nm.generation += 1;
      if (isNamespace) next.status = { ...(isObject(next.status) ? next.status : {}), phase: 'Terminating' };
      if (ctx.dryRun) return { stored: dryRunResult(key, next), deleted: false };
      try {
        return { stored: await this.store.update(key, next, current.revision), deleted: false };
      } catch (err) {
        throw this.storageError(err, t, name);
      }
    }
    if (ctx.dryRun) return { stored: current, deleted: true };
    try {
      return { stored: await this.store.delete(key, current.revision), deleted: true };
    } catch (err) {
      throw this.storageError(err, t, name);
    }
  }

  async deleteCollection(
    t: ResourceType,
    namespace: string | undefined,
    p: ListParams,
    opts: DeleteParams,
    ctx: WriteContext,
  ): Promise<StoredObject[]> {
    const { items } = this.list(t, namespace, { ...p, limit: undefined, continue: undefined });
    const out: StoredObject[] = [];
    for (const item of items) {
      const m = item.object.metadata as Obj;
      try {
        const { stored } = await this.delete(
          t,
          m.namespace as string | undefined,
          m.name as string,
          opts,
          ctx,
        );
        out.push(stored);
      } catch (err) {
        // Another client deleting the same object concurrently is not a failure of the collection delete.
        if (!(err instanceof ApiError && (err.code === 404 || err.code === 409))) throw err;
      }
    }
    return out;
  }

  /**
   * Deletions that wait for someone else: a namespace until the namespace controller has emptied
   * it (its `spec.finalizers`). Pods on a node will wait for their kubelet once one exists.
   */
  /**
   * `POST pods/<name>/binding` (Kubernetes' `BindingREST`): assigns a pod that has no node yet
   * to `binding.target.name`, merges the binding's annotations and marks it `PodScheduled`.
   * This is how schedulers bind; `spec.nodeName` is otherwise immutable.
   */
  async bind(
    t: ResourceType,
    namespace: string | undefined,
    name: string,
    binding: Obj,
    ctx: WriteContext,
  ): Promise<void> {
    const bm = isObject(binding.metadata) ? binding.metadata : {};
    if (bm.name !== name) throw ApiError.badRequest('name in URL does not match name in Binding object');
    const target = isObject(binding.target) ? binding.target : {};
    const causes: StatusCause[] = [];
    if (target.kind !== undefined && target.kind !== '' && target.kind !== 'Node')
      causes.push({
        reason: 'FieldValueNotSupported',
        field: 'target.kind',
        message: `Unsupported value: ${JSON.stringify(target.kind)}: supported values: "", "Node"`,
      });
    if (typeof target.name !== 'string' || target.name === '')
      causes.push({ reason: 'FieldValueRequired', field: 'target.name', message: 'Required value' });
    if (causes.length > 0) throw ApiError.invalid({ group: '', kind: 'Binding' }, name, causes);
    const node = target.name as string;
    const conflict = (why: string) => ApiError.conflict({ group: '', resource: 'pods/binding' }, name, why);
    for (;;) {
      const current = this.get(t, namespace, name);
      const pod = current.object as Obj;
      const pm = pod.metadata as Obj;
      const spec = isObject(pod.spec) ? pod.spec : {};
      if (pm.deletionTimestamp) throw conflict(`pod ${name} is being deleted, cannot be assigned to a host`);
      if (spec.nodeName)
        throw conflict(`pod ${name} is already assigned to node ${JSON.stringify(spec.nodeName)}`);
      const next = clone(pod) as Obj;
      (next.spec as Obj).nodeName = node;
      const annotations = isObject(bm.annotations) ? bm.annotations : {};
      if (Object.keys(annotations).length > 0) {
        const nm = meta(next);
        nm.annotations = { ...(isObject(nm.annotations) ? nm.annotations : {}), ...annotations };
      }
      if (!isObject(next.status)) next.status = {};
      const status = next.status as Obj;
      const conditions = (Array.isArray(status.conditions) ? status.conditions : []) as Obj[];
      const scheduled = conditions.find((c) => c.type === 'PodScheduled');
      if (!scheduled)
        conditions.push({
          type: 'PodScheduled',
          status: 'True',
          lastProbeTime: null,
          lastTransitionTime: timestamp(),
        });
      else if (scheduled.status !== 'True')
        Object.assign(scheduled, {
          status: 'True',
          lastTransitionTime: timestamp(),
          reason: undefined,
          message: undefined,
        });
      if (scheduled)
        for (const k of ['reason', 'message']) if (scheduled[k] === undefined) delete scheduled[k];
      status.conditions = conditions;
      if (ctx.dryRun) return;
      try {
        await this.store.update(this.key(t, namespace, name), next, current.revision);
        return;
      } catch (err) {
        // Someone else wrote the pod meanwhile: read it again (a GuaranteedUpdate).
        if (err instanceof StorageError && err.code === 'Conflict') continue;
        throw this.storageError(err, t, name);
      }
    }
  }

  /**
   * The grace period of a pod's deletion (Kubernetes' pod strategy `CheckGracefulDelete`): the
   * request's, else the pod's `terminationGracePeriodSeconds` (30); 0 for a pod not scheduled,
   * already terminated, or on a node no kubelet runs. 0 for every other kind.
   */
  private podGracePeriod(t: ResourceType, pod: Obj, opts: DeleteParams): number {
    if (t.group !== '' || t.resource !== 'pods') return 0;
    const spec = isObject(pod.spec) ? pod.spec : {};
    const phase = isObject(pod.status) ? pod.status.phase : undefined;
    if (typeof spec.nodeName !== 'string' || !spec.nodeName) return 0;
    if (phase === 'Succeeded' || phase === 'Failed') return 0;
    if (!this.hooks.hasKubelet?.(spec.nodeName)) return 0;
    if (typeof opts.gracePeriodSeconds === 'number') return Math.max(0, opts.gracePeriodSeconds);
    return typeof spec.terminationGracePeriodSeconds === 'number' ? spec.terminationGracePeriodSeconds : 30;
  }

  private gracefulDeletion(t: ResourceType, obj: Obj): boolean {
    return (
      t.group === '' &&
      t.resource === 'namespaces' &&
      strings((obj.spec as Obj | undefined)?.finalizers).length > 0
    );
  }

  private resetStatusOnCreate(t: ResourceType, obj: Obj): void {
    // Strategies of built-in kinds and custom resources with a status subresource drop the
    // status a client sends on create; pods start Pending, namespaces Active.
    if (t.group === '' && t.resource === 'pods') {
      obj.status = { phase: 'Pending', qosClass: podQOSClass(obj) };
      return;
    }
    if (t.group === '' && t.resource === 'namespaces') {
      // No phase yet: the namespace defaults read its absence as "create" and add both the
      // `kubernetes` finalizer and phase Active (PrepareForCreate), so deletion waits for the controller.
      obj.status = {};
      return;
    }
    if (t.group === '' && t.resource === 'nodes') return;
    delete obj.status;
  }

  private validate(t: ResourceType, obj: Obj, old: Obj | undefined, metaCauses: StatusCause[]): void {
    t.behaviour.defaults?.(obj);
    t.behaviour.prepare?.(obj, old);
    const causes = [...metaCauses, ...(t.behaviour.validate?.(obj, old) ?? [])];
    if (causes.length > 0) {
      const name =
        (meta(obj).name as string | undefined) ?? (meta(obj).generateName as string | undefined) ?? '';
      throw ApiError.invalid(gk(t), name, causes);
    }
  }

  private async guaranteedUpdate(
    t: ResourceType,
    namespace: string | undefined,
    name: string,
    subresource: 'status' | undefined,
    ctx: WriteContext,
    expectedRevision: number | undefined,
    desired: (current: Obj) => Obj,
  ): Promise<StoredObject> {
    const key = this.key(t, namespace, name);
    for (let attempt = 0; ; attempt++) {
      const current = this.store.get(key);
      if (!current) throw ApiError.notFound(gr(t), name);
      if (expectedRevision !== undefined && expectedRevision !== current.revision) {
        throw ApiError.staleObject(gr(t), name);
      }
      // `stored` is what is in storage; `old` is it as the request's kind sees it (they differ
      // only for kinds stored as another, such as events.k8s.io Events).
      const stored = current.object as Obj;
      const oldView = t.storedAs ? presentAs(t, current) : current;
      const old = oldView.object as Obj;
      // A parse of the cached encoding is the cheapest deep copy; a custom resource's presented
      // view is the stored object already read through t's version (as fromStorageVersion reads it).
      const base = JSON.parse((t.custom ? presentAs(t, current) : oldView).json) as Obj;
      const input = desired(base);
      // The optimistic lock of the registry's update (`Store.Update`): a patched or updated object
      // that names a resourceVersion other than the current one conflicts, so a merge patch
      // carrying a stale `metadata.resourceVersion` (controller-runtime's
      // MergeFromWithOptimisticLock) fails instead of overwriting a newer state.
      const inputRv = isObject(input.metadata) ? input.metadata.resourceVersion : undefined;
      if (
        typeof inputRv === 'string' &&
        inputRv !== '' &&
        parseResourceVersion(inputRv) !== current.revision
      ) {
        throw ApiError.staleObject(gr(t), name);
      }
      const next = this.prepareUpdate(t, input, old, oldView.json, subresource, namespace);
      const nm = meta(next);
      const om = old.metadata as Obj;
      // An unconditional update is validated as an update of the stored version (BeforeUpdate).
      if (nm.resourceVersion === undefined || nm.resourceVersion === '')
        nm.resourceVersion = om.resourceVersion;

      const causes = validateObjectMeta(nm, {
        namespaced: t.namespaced,
        nameValidation: t.nameValidation,
        create: false,
      });
      causes.push(...metaUpdateCauses(nm, om));
      this.validate(t, next, old, causes);
      if (ctx.fieldManager !== undefined && !ctx.applied)
        this.hooks.manageFields?.(t, old, next, ctx.fieldManager, subresource);
      this.hooks.allocate?.(t, next, old);
      await this.hooks.admit?.('UPDATE', t, next, old);

      toStorageVersion(t, next);
      if (t.generation && !deepEqual(specOf(t, next), specOf(t, stored))) {
        nm.generation = ((om.generation as number | undefined) ?? 0) + 1;
      }

      const deleting = Boolean(om.deletionTimestamp);
      if (deleting && strings(nm.finalizers).length === 0 && !this.gracefulDeletion(t, next)) {
        // The last finalizer is gone: the update is written, then completes the deletion
        // (`deleteWithoutFinalizers`). The response is the object as finally written (no
        // finalizers, with its deletionTimestamp and the update's resourceVersion); watchers see
        // that MODIFIED state, then DELETED.
        nm.resourceVersion = om.resourceVersion;
        if (ctx.dryRun) return dryRunResult(key, next);
        try {
          // Both writes are issued before any await, so nothing comes in between them; a
          // refused update (a conflict) wrote nothing, and then nothing is deleted either.
          const written = this.store.update(key, next, current.revision);
          const wrote = (this.store.get(key)?.revision ?? 0) > current.revision;
          const removed = wrote ? this.store.delete(key) : undefined;
          const out = await written;
          await removed;
          return out;
        } catch (err) {
          if (
            err instanceof StorageError &&
            err.code === 'Conflict' &&
            expectedRevision === undefined &&
            attempt < 10
          )
            continue;
          throw this.storageError(err, t, name);
        }
      }
      nm.resourceVersion = om.resourceVersion;
      if (deepEqual(next, stored)) return current;
      if (ctx.dryRun) return dryRunResult(key, next);
      try {
        return await this.store.update(key, next, current.revision).catch((err: unknown) => {
          if (!dropManagedFieldsIfTooLarge(err, next, ctx)) throw err;
          return this.store.update(key, next, current.revision);
        });
      } catch (err) {
        // Someone else wrote in between (only possible across an await above): retry an
        // unconditional update on the new state, as GuaranteedUpdate does.
        if (
          err instanceof StorageError &&
          err.code === 'Conflict' &&
          expectedRevision === undefined &&
          attempt < 10
        )
          continue;
        throw this.storageError(err, t, name);
      }
    }
  }

  /** The strategy's PrepareForUpdate: what a write to the main resource or `/status` may change. */
  private prepareUpdate(
    t: ResourceType,
    input: Obj,
    old: Obj,
    oldJson: string,
    subresource: 'status' | undefined,
    namespace: string | undefined,
  ): Obj {
    const om = old.metadata as Obj;
    let next: Obj;
    if (subresource === 'status') {
      // `oldJson` is old's encoding: its parse is the deep copy.
      next = JSON.parse(oldJson) as Obj;
      if (input.status === undefined) delete next.status;
      else next.status = input.status;
      // A status write may not touch metadata, except the resourceVersion precondition and the
      // managed fields the field manager computed for this write (the status strategies keep them).
      const mf = isObject(input.metadata) ? input.metadata.managedFields : undefined;
      if (mf !== undefined) meta(next).managedFields = mf;
    } else {
      next = input;
      if (t.subresources.status) {
        if (old.status === undefined) delete next.status;
        else next.status = clone(old.status);
      }
    }
    const nm = meta(next);
    next.apiVersion = apiVersionOf(t);
    next.kind = t.kind;
    nm.name = om.name;
    if (t.namespaced) nm.namespace = namespace;
    else delete nm.namespace;
    // Fields only the server sets.
    nm.creationTimestamp = om.creationTimestamp;
    if (nm.uid === undefined || nm.uid === '') nm.uid = om.uid;
    if (om.deletionTimestamp !== undefined) nm.deletionTimestamp = om.deletionTimestamp;
    else delete nm.deletionTimestamp;
    if (om.deletionGracePeriodSeconds !== undefined)
      nm.deletionGracePeriodSeconds = om.deletionGracePeriodSeconds;
    else delete nm.deletionGracePeriodSeconds;
    if (om.generation !== undefined) nm.generation = om.generation;
    else delete nm.generation;
    if (om.generateName !== undefined && nm.generateName === undefined) nm.generateName = om.generateName;
    delete nm.selfLink;
    return next;
  }

  private storageError(err: unknown, t: ResourceType, name: string): unknown {
    if (!(err instanceof StorageError)) return err;
    switch (err.code) {
      case 'AlreadyExists':
        return ApiError.alreadyExists(gr(t), name);
      case 'NotFound':
        return ApiError.notFound(gr(t), name);
      case 'Conflict':
        return ApiError.staleObject(gr(t), name);
      case 'TooOld':
        return ApiError.expired(err.message);
      case 'TooLarge':
        // kube-apiserver passes etcd's error through unmapped: a 500 without a reason.
        return new ApiError({ code: 500, message: err.message });
      default:
        return ApiError.serviceUnavailable(err.message);
    }
  }
}

/** The pod's QoS class (`qos.GetPodQOS`): Guaranteed, Burstable or BestEffort. */
export function podQOSClass(pod: Obj): string {
  const spec = isObject(pod.spec) ? pod.spec : {};
  const containers = [
    ...(Array.isArray(spec.containers) ? spec.containers : []),
    ...(Array.isArray(spec.initContainers) ? spec.initContainers : []),
  ].filter(isObject);
  let any = false;
  let guaranteed = containers.length > 0;
  for (const c of containers) {
    const res = isObject(c.resources) ? c.resources : {};
    const requests = isObject(res.requests) ? res.requests : {};
    const limits = isObject(res.limits) ? res.limits : {};
    if (Object.keys(requests).length > 0 || Object.keys(limits).length > 0) any = true;
    for (const r of ['cpu', 'memory']) {
      if (limits[r] === undefined || (requests[r] !== undefined && requests[r] !== limits[r]))
        guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

/**
 * What `metadata.generation` tracks: everything but metadata and, when the kind has a status
 * subresource, status (a custom resource without one bumps its generation on status changes too).
 */
function specOf(t: ResourceType, obj: Obj): Obj {
  const { metadata: _m, status, ...rest } = obj;
  return t.subresources.status ? rest : { ...rest, status };
}

/** ValidateObjectMetaUpdate: fields that cannot change, and finalizers during deletion. */
function metaUpdateCauses(nm: Obj, om: Obj): StatusCause[] {
  const causes: StatusCause[] = [];
  if (nm.uid !== om.uid) {
    causes.push(fieldError('FieldValueInvalid', 'metadata.uid', nm.uid, 'field is immutable'));
  }
  if (om.deletionTimestamp) {
    const before = new Set(strings(om.finalizers));
    const added = strings(nm.finalizers).filter((f) => !before.has(f));
    if (added.length > 0) {
      causes.push(
        fieldError(
          'FieldValueForbidden',
          'metadata.finalizers',
          undefined,
          `no new finalizers can be added if the object is being deleted, found new finalizers []string{${added.map((f) => JSON.stringify(f)).join(', ')}}`,
        ),
      );
    }
  }
  return causes;
}

/**
 * The create, update and patch handlers' second try: an object too large for etcd is written
 * again without its managed fields, which may be what made it large. An apply keeps them (its
 * fields are what it is about), and so fails. True when the object lost managed fields.
 */
function dropManagedFieldsIfTooLarge(err: unknown, obj: Obj, ctx: WriteContext): boolean {
  if (!(err instanceof StorageError && err.code === 'TooLarge') || ctx.applied) return false;
  const m = meta(obj);
  if (m.managedFields === undefined) return false;
  delete m.managedFields;
  return true;
}

/**
 * `rest.EnsureObjectNamespaceMatchesRequestNamespace`: an object without a namespace takes the
 * URL's, a cluster-scoped object loses its namespace, and a different one is a 400.
 */
function checkNamespace(t: ResourceType, m: Obj, namespace: string | undefined): void {
  if (!t.namespaced) {
    delete m.namespace;
    return;
  }
  if (m.namespace !== undefined && m.namespace !== '' && m.namespace !== namespace) {
    throw ApiError.badRequest(
      'the namespace of the provided object does not match the namespace sent on the request',
    );
  }
  m.namespace = namespace;
}

/** Whether a resourceVersion parses as a non-zero uint64, as apimachinery's versioner reads it. */
function hasResourceVersion(rv: unknown): boolean {
  if (typeof rv !== 'string' || !/^\d+$/.test(rv)) return false;
  const n = BigInt(rv);
  return n > 0n && n < 2n ** 64n;
}

function dryRunResult(key: string, obj: Obj): StoredObject {
  return { key, object: obj as KubeObject, revision: 0, json: JSON.stringify(obj) };
}

export function parseResourceVersion(rv: string): number {
  const n = Number(rv);
  if (!/^\d+$/.test(rv) || !Number.isSafeInteger(n)) {
    throw ApiError.badRequest(`resourceVersion: Invalid value: "${rv}": must be a non-negative integer`);
  }
  return n;
}

function tooLarge(rv: number, current: number): ApiError {
  return new ApiError({
    code: 504,
    reason: 'Timeout',
    message: `Timeout: Too large resource version: ${rv}, current: ${current}`,
    details: {
      causes: [{ reason: 'ResourceVersionTooLarge', message: `Too large resource version` }],
      retryAfterSeconds: 1,
    },
  });
}

function encodeContinue(c: Continue): string {
  return Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: c.rv, start: c.start })).toString('base64url');
}

function decodeContinue(token: string): Continue {
  try {
    const raw = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown;
    if (
      isObject(raw) &&
      raw.v === 'meta.k8s.io/v1' &&
      typeof raw.rv === 'number' &&
      typeof raw.start === 'string'
    ) {
      if (raw.start.includes('..') || raw.start.startsWith('/')) throw new Error('invalid start key');
      return { rv: raw.rv, start: raw.start };
    }
  } catch {
    // fall through to the error below
  }
  throw ApiError.badRequest(
    'continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)',
  );
}
