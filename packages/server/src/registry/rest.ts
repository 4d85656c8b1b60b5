import { ApiError, type FieldSelector, type StatusCause, validateObjectMeta } from 'kubeloop/api';
import type { AdmissionOptions } from '../admission/options.js';
import { present, readForUpdate, toStorageVersion } from '../apiextensions/conversion.js';
import { objectKey, StorageError, type Store } from '../storage/store.js';
import type { KubeObject, StoredObject } from '../storage/types.js';
import { clone, deepEqual, isObject, meta, type Obj, setPath, timestamp } from '../util/object.js';
import { randomUuid } from '../util/uuid.js';
import { admissionOptions, type DeleteParams, deleteOptions } from './generic/admission-options.js';
import { confirmWrite } from './generic/confirm-write.js';
import {
  checkDeletePreconditions,
  dropManagedFieldsIfTooLarge,
  dryRunResult,
  gk,
  gr,
  isConflict,
  storageError,
  type WriteContext,
} from './generic/errors.js';
import { manageThenMutate } from './generic/field-manager-admission.js';
import { deletionStep } from './generic/gc-finalizers.js';
import type { RestHooks } from './generic/hooks.js';
import {
  checkGetResourceVersion,
  type ListOutcome,
  type ListParams,
  listObjects,
  parseObjectResourceVersion,
} from './generic/list.js';
import {
  checkNameOnUrl,
  checkNamespace,
  hasResourceVersion,
  kubeFinalizerCauses,
  metaUpdateCauses,
  prepareUpdate,
  randomSuffix,
  specOf,
  strings,
} from './generic/object-meta.js';
import { readScale, requestedReplicas, scaleOf } from './generic/scale.js';
import { checkFieldSelector, fieldValue, selectorMatcher } from './generic/selectors.js';
import type { Registry } from './registry.js';
import { type ResourceType, storageOf, type UpdateStrategy } from './types.js';

export type { DeleteParams } from './generic/admission-options.js';
export type { WriteContext } from './generic/errors.js';
export type { RestHooks } from './generic/hooks.js';
export type { ListOutcome, ListParams } from './generic/list.js';
export { parseResourceVersion } from './generic/list.js';

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

  /**
   * One object. With a `resourceVersion` (GET's parameter) it is served at least that fresh, as
   * kube's watch cache serves it: one the store has not reached is too large, one that is not a
   * number kube's 500.
   */
  get(t: ResourceType, namespace: string | undefined, name: string, resourceVersion?: string): StoredObject {
    checkGetResourceVersion(this.store, resourceVersion);
    const found = this.store.get(this.key(t, namespace, name));
    if (!found) throw ApiError.notFound(gr(t), name);
    return found;
  }

  /** The value of a field selector's field for an object of this type. */
  fieldValue(t: ResourceType, obj: Readonly<KubeObject>, field: string): string | undefined {
    return fieldValue(t, obj, field);
  }

  /** Checks that every field of a selector is supported, as the apiserver's field label conversion does. */
  checkFieldSelector(t: ResourceType, sel: FieldSelector | undefined): void {
    checkFieldSelector(t, sel);
  }

  /** A predicate for the label and field selectors of a list or watch. */
  matcher(
    t: ResourceType,
    p: Pick<ListParams, 'labelSelector' | 'fieldSelector'>,
  ): ((o: StoredObject) => boolean) | undefined {
    return selectorMatcher(t, p);
  }

  list(t: ResourceType, namespace: string | undefined, p: ListParams): ListOutcome {
    this.checkFieldSelector(t, p.fieldSelector);
    return listObjects(this.store, t, namespace, p, this.matcher(t, p));
  }

  async create(
    t: ResourceType,
    namespace: string | undefined,
    input: Obj,
    ctx: WriteContext,
  ): Promise<StoredObject> {
    const loading = t.behaviour.load?.();
    if (loading) await loading;
    const obj = input;
    let m = meta(obj);
    checkNamespace(t, m, namespace);
    // Mutating admission (NamespaceLifecycle is one) runs in the create handler before the
    // registry's BeforeCreate: before the name is generated and before validation, so an
    // invalid object in a missing or terminating namespace gets that namespace's answer.
    const admission = admissionOptions(
      ctx,
      'CreateOptions',
      namespace,
      typeof m.name === 'string' ? m.name : '',
    );
    const mutating = manageThenMutate(this.hooks, this.registry, t, obj, undefined, ctx, admission);
    if (mutating) await mutating;
    // A webhook's patch replaces the object's content, metadata included: the uid, timestamp and
    // generation set below go on the admitted metadata, not the one read before.
    m = meta(obj);
    confirmWrite(t, obj, undefined, namespace, ctx, this.hooks.authorization);
    if ((m.name === undefined || m.name === '') && typeof m.generateName === 'string' && m.generateName) {
      // apimachinery's SimpleNameGenerator: the base is cut to 58 characters, so that the name
      // fits in a DNS label (63) and the generateName's own length is its only error.
      m.name = `${m.generateName.slice(0, 58)}${randomSuffix()}`;
    }
    m.uid = randomUuid();
    m.creationTimestamp = timestamp();
    delete m.deletionTimestamp;
    delete m.deletionGracePeriodSeconds;
    delete m.selfLink;
    if (t.generation) m.generation = 1;
    else delete m.generation;
    if (t.subresources.status) {
      // Strategies of built-in kinds and custom resources with a status subresource drop the
      // status a client sends on create, unless the kind says otherwise (pods start Pending).
      const statusOnCreate = t.behaviour.storage?.statusOnCreate;
      if (statusOnCreate) statusOnCreate(obj);
      else delete obj.status;
    }

    this.validate(t, obj, undefined, [
      ...validateObjectMeta(m, { namespaced: t.namespaced, nameValidation: t.nameValidation, create: true }),
      ...kubeFinalizerCauses(t, m),
    ]);
    this.hooks.allocate?.(t, obj, undefined, ctx.dryRun === true);
    const admitting = this.hooks.admit?.('CREATE', t, obj, undefined, admission);
    if (admitting) await admitting;

    const name = m.name as string;
    const key = this.key(t, namespace, name);
    if (ctx.dryRun) {
      if (this.store.get(key)) throw this.alreadyExists(t, key, name);
      // A dry run encodes the object for storage and decodes it back (through a webhook too, and
      // from an older built-in version, such as an autoscaling/v1 HPA stored as v2).
      const converting = toStorageVersion(t, obj);
      if (converting) await converting;
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
    const converting = toStorageVersion(t, obj);
    if (converting) await converting;
    try {
      return await this.store.create(key, obj);
    } catch (err) {
      if (err instanceof StorageError && err.code === 'AlreadyExists') throw this.alreadyExists(t, key, name);
      // Too large with its managed fields: stored once more without them (below), as kube does.
      if (!dropManagedFieldsIfTooLarge(err, obj, ctx)) throw storageError(err, t, name);
    }
    try {
      return await this.store.create(key, obj);
    } catch (err) {
      throw storageError(err, t, name);
    }
  }

  /** The registry's AlreadyExists of a create, which says so when the object there is being deleted. */
  private alreadyExists(t: ResourceType, key: string, name: string): ApiError {
    const err = ApiError.alreadyExists(gr(t), name);
    const existing = this.store.get(key)?.object.metadata as Obj | undefined;
    if (!existing?.deletionTimestamp) return err;
    return new ApiError({ ...err.status, message: `object is being deleted: ${err.status.message}` });
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
    subresource: UpdateStrategy,
    ctx: WriteContext,
  ): Promise<StoredObject> {
    const m = meta(input);
    checkNamespace(t, m, namespace);
    checkNameOnUrl(m, name);
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
    const expected = rv === undefined ? undefined : parseObjectResourceVersion(rv);
    return this.guaranteedUpdate(t, namespace, name, subresource, ctx, expected, () => clone(input));
  }

  /** PATCH: `apply` turns the current object into the desired one (merge, JSON or strategic patch). */
  async patch(
    t: ResourceType,
    namespace: string | undefined,
    name: string,
    subresource: UpdateStrategy,
    ctx: WriteContext,
    apply: (current: Obj) => Obj | Promise<Obj>,
  ): Promise<StoredObject> {
    // The patch handler's namespace and name checks (`applyPatch`/`checkName`): a patched
    // object that moved or was renamed is a bad request, not a validation error.
    const check = (next: Obj): Obj => {
      if (!isObject(next)) throw ApiError.badRequest('the patch did not produce an object');
      const m = meta(next);
      checkNamespace(t, m, namespace);
      checkNameOnUrl(m, name);
      return next;
    };
    return this.guaranteedUpdate(t, namespace, name, subresource, ctx, undefined, (current) => {
      const next = apply(current);
      return next instanceof Promise ? next.then(check) : check(next);
    });
  }

  /**
   * Reads `.spec.replicas` & co. as an `autoscaling/v1` Scale. A custom resource without spec
   * replicas has no Scale to read (ScaleREST.Get: a 500); `forUpdate` (the base of a patch) marks
   * the replicas as absent instead, as ScaleREST.Update does.
   */
  getScale(t: ResourceType, ns: string | undefined, name: string, forUpdate = false): Obj | Promise<Obj> {
    const stored = this.get(t, ns, name);
    // The Scale of a custom resource is read from the object at the request's version.
    const view = t.custom ? present(t, stored) : stored;
    if (view instanceof Promise) return view.then((v) => readScale(t, v.object as Obj, forUpdate));
    return readScale(t, view.object as Obj, forUpdate);
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
    const replicas = requestedReplicas(t, name, scale);
    const m = isObject(scale.metadata) ? scale.metadata : {};
    checkNameOnUrl(m, name);
    const rv =
      typeof m.resourceVersion === 'string' && m.resourceVersion
        ? parseObjectResourceVersion(m.resourceVersion)
        : undefined;
    // The Scale's managed fields are the parent's replicas owners: moved here, not recomputed.
    // A write through /scale is admitted as the scale: the warnings are admission's (webhooks,
    // policies) on the Scale, passed on as kube passes them.
    const parentCtx = { ...ctx, applied: true };
    const stored = await this.guaranteedUpdate(
      t,
      namespace,
      name,
      undefined,
      parentCtx,
      rv,
      (current) => {
        const oldScale = ctx.fieldManager !== undefined ? scaleOf(t, current) : undefined;
        setPath(current, scaleSpec.specReplicasPath, replicas);
        if (oldScale && ctx.fieldManager !== undefined)
          this.hooks.manageScaleFields?.(t, current, oldScale, scale, ctx.fieldManager, ctx.applied === true);
        return current;
      },
      {
        of: (parent) => scaleOf(t, parent),
        apply: (parent, s) => setPath(parent, scaleSpec.specReplicasPath, requestedReplicas(t, name, s)),
      },
    );
    const view = t.custom ? present(t, stored) : stored;
    return this.scaleOf(t, view instanceof Promise ? await view : view);
  }

  scaleOf(t: ResourceType, stored: StoredObject): Obj {
    return scaleOf(t, stored.object as Obj);
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
    inCollection = false,
  ): Promise<{ stored: StoredObject; deleted: boolean }> {
    // The kind's REST storage refuses by name; a collection delete goes around it, as in kube.
    const refusal = inCollection ? undefined : t.behaviour.storage?.refuseDelete?.(name);
    if (refusal) throw ApiError.forbidden({ group: t.group, resource: t.resource }, name, refusal);
    const key = this.key(t, namespace, name);
    const current = this.get(t, namespace, name);
    const cm = current.object.metadata as Obj;
    checkDeletePreconditions(t, name, cm, opts.preconditions);
    const admission = admissionOptions(ctx, 'DeleteOptions', namespace, name, deleteOptions(opts));
    // Through a conversion webhook, read at the request's version (a webhook down fails it, as in kube).
    const seen = (
      t.custom?.conversion === 'Webhook' ? (await present(t, current)).object : current.object
    ) as Obj;
    await this.hooks.mutate?.('DELETE', t, seen, seen, admission);
    await this.hooks.admit?.('DELETE', t, seen, seen, admission);

    const step = deletionStep(
      t,
      current.object as Obj,
      opts,
      this.gracePeriod(t, current.object as Obj, opts),
      this.waitsForFinalization(t, current.object as Obj),
    );
    if (step === 'keep') return { stored: current, deleted: false };
    if (step !== 'remove') {
      if (ctx.dryRun) return { stored: dryRunResult(key, step), deleted: false };
      try {
        return { stored: await this.store.update(key, step, current.revision), deleted: false };
      } catch (err) {
        throw storageError(err, t, name);
      }
    }
    if (ctx.dryRun) return { stored: current, deleted: true };
    try {
      return { stored: await this.store.delete(key, current.revision), deleted: true };
    } catch (err) {
      throw storageError(err, t, name);
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
    for (const item of items) {
      const m = item.object.metadata as Obj;
      try {
        await this.delete(t, m.namespace as string | undefined, m.name as string, opts, ctx, true);
      } catch (err) {
        // Another client deleting the same object concurrently is not a failure of the collection delete.
        if (!(err instanceof ApiError && (err.code === 404 || err.code === 409))) throw err;
      }
    }
    // kube answers the list it deleted from, as listed: not the objects its deletes left.
    return items;
  }

  /**
   * `POST <resource>/<name>/<subresource>` of a subresource that rewrites its parent (a Pod's
   * `binding`, Kubernetes' `BindingREST`): the kind's hook changes a copy of the current object,
   * which is written with the optimistic lock and retried when someone else wrote meanwhile.
   */
  async postSubresource(
    t: ResourceType,
    namespace: string | undefined,
    name: string,
    subresource: string,
    body: Obj,
    ctx: WriteContext,
  ): Promise<void> {
    const hook = t.behaviour.storage?.postSubresources?.[subresource];
    if (!hook) throw ApiError.notFound(gr(t), name);
    hook.check(body, name);
    for (;;) {
      const current = this.get(t, namespace, name);
      const next = hook.apply(clone(current.object) as Obj, body, name);
      if (ctx.dryRun) return;
      try {
        await this.store.update(this.key(t, namespace, name), next, current.revision);
        return;
      } catch (err) {
        // Someone else wrote the object meanwhile: read it again (a GuaranteedUpdate).
        if (isConflict(err)) continue;
        throw storageError(err, t, name);
      }
    }
  }

  /**
   * The grace period of a deletion (the strategy's `CheckGracefulDelete`): 0, an immediate
   * deletion, for kinds without the hook.
   */
  private gracePeriod(t: ResourceType, obj: Obj, opts: DeleteParams): number {
    const hook = t.behaviour.storage?.gracePeriod;
    if (!hook) return 0;
    return hook(obj, opts.gracePeriodSeconds, {
      hasKubelet: (node) => this.hooks.hasKubelet?.(node) ?? false,
    });
  }

  /** Whether a deletion waits for someone else besides `metadata.finalizers`. */
  private waitsForFinalization(t: ResourceType, obj: Obj): boolean {
    return t.behaviour.storage?.waitsForFinalization?.(obj) ?? false;
  }

  private validate(
    t: ResourceType,
    obj: Obj,
    old: Obj | undefined,
    metaCauses: StatusCause[],
    strategy?: UpdateStrategy,
  ): void {
    t.behaviour.defaults?.(obj);
    t.behaviour.prepare?.(obj, old, strategy);
    const causes = [...metaCauses, ...(t.behaviour.validate?.(obj, old, strategy) ?? [])];
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
    subresource: UpdateStrategy,
    ctx: WriteContext,
    expectedRevision: number | undefined,
    desired: (current: Obj) => Obj | Promise<Obj>,
    scale?: AdmissionOptions['scale'],
  ): Promise<StoredObject> {
    const loading = t.behaviour.load?.();
    if (loading) await loading;
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
      let read = readForUpdate(t, current);
      if (read instanceof Promise) read = await read;
      const { oldView, base } = read;
      const old = oldView.object as Obj;
      let input = desired(base);
      if (input instanceof Promise) input = await input;
      // The optimistic lock of the registry's update (`Store.Update`): a patched or updated object
      // that names a resourceVersion other than the current one conflicts, so a merge patch
      // carrying a stale `metadata.resourceVersion` (controller-runtime's
      // MergeFromWithOptimisticLock) fails instead of overwriting a newer state.
      const inputRv = isObject(input.metadata) ? input.metadata.resourceVersion : undefined;
      if (
        typeof inputRv === 'string' &&
        inputRv !== '' &&
        parseObjectResourceVersion(inputRv) !== current.revision
      ) {
        throw ApiError.staleObject(gr(t), name);
      }
      const next = prepareUpdate(t, input, old, oldView.json, subresource, namespace);
      const admission: AdmissionOptions = admissionOptions(ctx, 'UpdateOptions', namespace, name);
      admission.subresource = scale ? 'scale' : subresource;
      if (scale) admission.scale = scale;
      await manageThenMutate(this.hooks, this.registry, t, next, old, ctx, admission, subresource);
      confirmWrite(t, next, old, namespace, ctx, this.hooks.authorization);
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
      causes.push(...metaUpdateCauses(nm, om), ...kubeFinalizerCauses(t, nm));
      this.validate(t, next, old, causes, subresource);
      this.hooks.allocate?.(t, next, old, ctx.dryRun === true);
      const admitting = this.hooks.admit?.('UPDATE', t, next, old, admission);
      if (admitting) await admitting;

      const converting = toStorageVersion(t, next);
      if (converting) await converting;
      if (
        t.generation === true &&
        (!deepEqual(specOf(t, next), specOf(t, stored)) ||
          (t.annotationsBumpGeneration &&
            subresource !== 'status' &&
            !deepEqual(nm.annotations ?? {}, om.annotations ?? {})))
      ) {
        nm.generation = ((om.generation as number | undefined) ?? 0) + 1;
      }

      const deleting = Boolean(om.deletionTimestamp);
      if (deleting && strings(nm.finalizers).length === 0 && !this.waitsForFinalization(t, next)) {
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
          if (isConflict(err) && expectedRevision === undefined && attempt < 10) continue;
          throw storageError(err, t, name);
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
        if (isConflict(err) && expectedRevision === undefined && attempt < 10) continue;
        throw storageError(err, t, name);
      }
    }
  }
}
