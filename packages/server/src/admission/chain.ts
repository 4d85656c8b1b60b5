/**
 * The admission stage: the plugins a create, update or delete passes after authorization and
 * before it is stored, in kube-apiserver's order. The registry calls {@link AdmissionChain.mutate}
 * (its `mutate` hook) before its strategy prepares and validates the object, and
 * {@link AdmissionChain.validate} (its `admit` hook) after; a plugin mutates the object or throws
 * an ApiError to refuse the request.
 *
 * Phases, as in kube-apiserver: mutating plugins (NamespaceLifecycle, LimitRanger's defaults,
 * ServiceAccount, Priority, DefaultStorageClass, StorageObjectInUseProtection,
 * DefaultIngressClass, MutatingAdmissionWebhook), run once more when a plugin changed the object
 * and asked for it (kube's reinvocation); then the schema checks of the kind (the registry's
 * strategy: validation, CRD schemas); then validating plugins (a terminating CRD's custom
 * resources, PodSecurity, LimitRanger's bounds, ValidatingAdmissionPolicy,
 * ValidatingAdmissionWebhook, then ResourceQuota). A plugin may also admit with a warning, added
 * to the options' `warnings` (sent as `Warning` headers).
 */
import type { ResourceType } from '../registry/types.js';
import type { Store } from '../storage/store.js';
import { lazyModule } from '../util/lazy-module.js';
import type { Obj } from '../util/object.js';
import { defaultIngressClass } from './default-ingress-class.js';
import { defaultStorageClass } from './default-storage-class.js';
import { namespaceLifecycle } from './namespace-lifecycle.js';
import type { AdmissionOptions } from './options.js';
import { actsOn, type Handles, isCore } from './plugin-kinds.js';
import { podSecurityAdmission } from './pod-security/admission.js';
import { type PolicyPluginDeps, validatingAdmissionPolicy } from './policy/plugin.js';
import { priorityAdmission } from './priority.js';
import { resourceQuotaAdmission } from './resource-quota.js';
import { runtimeClassAdmission } from './runtime-class.js';
import { storageObjectInUseProtection } from './storage-protection.js';
import { type WebhookAdmission, webhookAdmission } from './webhook/index.js';

export type { AdmissionOptions } from './options.js';

/** An admission operation. */
export type AdmissionOperation = 'CREATE' | 'UPDATE' | 'DELETE';

/**
 * One admission plugin: mutates `obj`, or throws (or rejects with) an ApiError to refuse. With
 * `handles` (`actsOn`, plugin-kinds.ts), the chain calls it only for the writes that accepts.
 */
export type AdmissionPlugin = ((
  op: AdmissionOperation,
  t: ResourceType,
  obj: Obj,
  old: Obj | undefined,
  options?: AdmissionOptions,
) => void | Promise<void>) & { handles?: Handles };

/** The plugins of one phase that act on each operation of one type. */
type Selected = Partial<Record<AdmissionOperation, readonly AdmissionPlugin[]>>;

/** The plugins of a server, run in order: mutating ones, then validating ones. */
export class AdmissionChain {
  private readonly mutating: AdmissionPlugin[];
  private readonly validating: AdmissionPlugin[];
  /** The validating plugins that come after any added later (ResourceQuota, as kube's last). */
  private readonly last: number;
  /** The plugins of each phase that act on an operation of a type, worked out once per type. */
  private readonly selected = {
    mutating: new WeakMap<ResourceType, Selected>(),
    validating: new WeakMap<ResourceType, Selected>(),
  };

  constructor(mutating: readonly AdmissionPlugin[] = [], last: readonly AdmissionPlugin[] = []) {
    this.mutating = [...mutating];
    this.validating = [...last];
    this.last = last.length;
  }

  /**
   * Adds a validating plugin after the others, before the chain's last ones: for plugins made
   * after the registry they guard.
   */
  addValidating(plugin: AdmissionPlugin): void {
    this.validating.splice(this.validating.length - this.last, 0, plugin);
    this.selected.validating = new WeakMap();
  }

  /** The plugins of `phase` that act on `op` of an object of `t`, in the chain's order. */
  private pluginsFor(
    phase: 'mutating' | 'validating',
    op: AdmissionOperation,
    t: ResourceType,
  ): readonly AdmissionPlugin[] {
    let byOp = this.selected[phase].get(t);
    if (!byOp) {
      byOp = {};
      this.selected[phase].set(t, byOp);
    }
    let plugins = byOp[op];
    if (!plugins) {
      plugins = this[phase].filter((p) => !p.handles || p.handles(op, t));
      byOp[op] = plugins;
    }
    return plugins;
  }

  /** The admission webhooks' plugins, when the chain has them (for their metrics). */
  webhooks?: WebhookAdmission;

  /**
   * Runs the mutating plugins on one request's object (before the registry validates it); once
   * more when a plugin changed the object and asked for it (kube's reinvocation).
   */
  readonly mutate = (
    op: AdmissionOperation,
    t: ResourceType,
    obj: Obj,
    old: Obj | undefined,
    options?: AdmissionOptions,
  ): Promise<void> | undefined => {
    const plugins = this.pluginsFor('mutating', op, t);
    const first = run(plugins, op, t, obj, old, options);
    // No closure for the reinvocation: every write passes here.
    return first
      ? first.then(() => reinvoke(plugins, op, t, obj, old, options))
      : reinvoke(plugins, op, t, obj, old, options);
  };

  /** Runs the validating plugins on one request's object (once the registry validated it). */
  readonly validate = (
    op: AdmissionOperation,
    t: ResourceType,
    obj: Obj,
    old: Obj | undefined,
    options?: AdmissionOptions,
  ): Promise<void> | undefined => run(this.pluginsFor('validating', op, t), op, t, obj, old, options);
}

/**
 * The built-in plugins kube-apiserver enables by default that this server has, over `store`;
 * with `policyDeps.registry`, the admission webhooks too (MutatingAdmissionWebhook last of the
 * mutating plugins, ValidatingAdmissionWebhook after ValidatingAdmissionPolicy, before
 * ResourceQuota).
 */
export function builtinAdmission(store: Store, policyDeps: PolicyPluginDeps = {}): AdmissionChain {
  // The plugins of pods and claims only load with the first such write (an idle server has none).
  let limitRanger: Promise<ReturnType<typeof import('./limit-ranger.js').limitRanger>> | undefined;
  const limits = () => (limitRanger ??= import('./limit-ranger.js').then((m) => m.limitRanger(store)));
  const pods: Handles = (_op, t) => isCore(t, 'pods');
  const webhooks = policyDeps.registry
    ? webhookAdmission(store, policyDeps.registry, { authorizer: () => policyDeps.authorizer })
    : undefined;
  const runtimeClass = runtimeClassAdmission(store);
  const chain = new AdmissionChain(
    [
      namespaceLifecycle(store),
      lazyPlugin(pods, () => limits().then((l) => l.mutate)),
      lazyPlugin(pods, () => import('./service-account.js').then((m) => m.serviceAccountAdmission(store))),
      priorityAdmission(store),
      defaultStorageClass(store),
      storageObjectInUseProtection(),
      runtimeClass.mutate,
      defaultIngressClass(store),
      ...(webhooks ? [webhooks.mutate] : []),
    ],
    // Last of the validating plugins, as in kube-apiserver (PodSecurity, LimitRanger,
    // ValidatingAdmissionPolicy, ValidatingAdmissionWebhook, then ResourceQuota): only a write
    // every other plugin admitted is charged to the quotas.
    [
      podSecurityAdmission(store),
      lazyPlugin(
        (_op, t) => isCore(t, 'pods', 'persistentvolumeclaims'),
        () => limits().then((l) => l.validate),
      ),
      runtimeClass.validate,
      validatingAdmissionPolicy(store, policyDeps),
      ...(webhooks ? [webhooks.validate] : []),
      resourceQuotaAdmission(store),
    ],
  );
  if (webhooks) chain.webhooks = webhooks;
  return chain;
}

/** Runs the mutating `plugins` once more when a plugin changed the object and asked for it. */
function reinvoke(
  plugins: readonly AdmissionPlugin[],
  op: AdmissionOperation,
  t: ResourceType,
  obj: Obj,
  old: Obj | undefined,
  options: AdmissionOptions | undefined,
): Promise<void> | undefined {
  const r = options?.reinvocation;
  if (!r?.shouldReinvoke || r.isReinvoke) return undefined;
  r.isReinvoke = true;
  return run(plugins, op, t, obj, old, options);
}

/**
 * A plugin whose module loads on the first write it acts on: `handles` (which needs nothing of
 * the module) must accept every write the loaded plugin acts on. The first call waits for the
 * module; later ones call the plugin directly, synchronous as it is.
 */
function lazyPlugin(handles: Handles, load: () => Promise<AdmissionPlugin>): AdmissionPlugin {
  const plugin = lazyModule(load);
  return actsOn(handles, (op, t, obj, old, options) => {
    const loading = plugin.load();
    if (loading) return loading.then(() => plugin.get()(op, t, obj, old, options));
    return plugin.get()(op, t, obj, old, options);
  });
}

/**
 * Runs `plugins` in order. Synchronous plugins run without a tick in between (a request with no
 * asynchronous plugin goes on in the same tick); from the first that returns a promise on, each
 * waits for the one before.
 */
function run(
  plugins: readonly AdmissionPlugin[],
  op: AdmissionOperation,
  t: ResourceType,
  obj: Obj,
  old: Obj | undefined,
  options: AdmissionOptions | undefined,
): Promise<void> | undefined {
  for (let i = 0; i < plugins.length; i++) {
    const pending = plugins[i]!(op, t, obj, old, options);
    if (pending) {
      return (async () => {
        await pending;
        for (const plugin of plugins.slice(i + 1)) await plugin(op, t, obj, old, options);
      })();
    }
  }
  return undefined;
}
