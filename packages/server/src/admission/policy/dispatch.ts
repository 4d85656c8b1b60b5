/**
 * The ValidatingAdmissionPolicy admission plugin's work (k8s.io/apiserver/pkg/admission/plugin/
 * policy/validating: dispatcher.go, validator.go): each policy that matches the request, through
 * each of its bindings that matches it, with each param, evaluates its matchConditions,
 * validations and auditAnnotations; a failed validation denies, warns or audits as the binding's
 * `validationActions` say, with kube's texts and status codes.
 *
 * Loaded by the plugin (`plugin.ts`) once a binding exists, with the CEL environment it needs;
 * policies are compiled once per stored version.
 */
import { ApiError, type Status } from 'kubeloop/api';
import type { Registry } from '../../registry/registry.js';
import type { ResourceType } from '../../registry/types.js';
import { collectionPrefix, objectKey, type Store } from '../../storage/store.js';
import type { StoredObject } from '../../storage/types.js';
import type { Obj } from '../../util/object.js';
import { AdmissionActivation, type AdmissionAttributes, type CelAuthorizer } from '../cel/index.js';
import {
  admissionAttributes,
  type EquivalentResources,
  isExemptAdmissionConfigurationResource,
  type MatchResources,
  matchesNamespaceSelector,
  matchesObjectSelector,
  matchPolicyResources,
  namespaceObject,
  type RuleMatch,
  registryEquivalents,
} from '../matching.js';
import type { AdmissionOptions } from '../options.js';
import { type CompiledPolicy, type CompiledValidation, compilePolicy } from './compile.js';
import { errorType, type PolicyMetrics } from './metrics.js';
import { collectParams } from './params.js';

const GROUP = 'admissionregistration.k8s.io';
const MAX_MESSAGE_EXPRESSION_BYTES = 5 * 1024;
const MAX_AUDIT_ANNOTATION_VALUE = 10 * 1024;

/** What the plugin needs of the server besides the store (each optional: set once the server has it). */
export interface PolicyPluginDeps {
  /** Resolves paramKinds and equivalent resources. */
  registry?: Registry;
  /** Answers `authorizer` in expressions. */
  authorizer?: CelAuthorizer;
  equivalents?: EquivalentResources;
  /** Where decisions are counted (`apiserver_validating_admission_policy_*`). */
  metrics?: PolicyMetrics;
}

interface Decision {
  action: 'Admit' | 'Deny';
  /** Seconds the expression took. */
  elapsed?: number;
  message?: string;
  reason?: string;
  /** An evaluation error (not a failed validation). */
  error?: boolean;
}

interface Denied {
  policy: string;
  binding?: string;
  message: string;
  reason?: string;
}

const exact: EquivalentResources = {
  equivalents: (r) => [r],
  kindFor: () => undefined,
};

/** The plugin's check of one request against the bindings stored now. */
export type PolicyDispatch = (
  op: AdmissionAttributes['operation'],
  t: ResourceType,
  obj: Obj,
  old: Obj | undefined,
  options: AdmissionOptions | undefined,
) => void;

/** Where the bindings and the policies are stored. */
const BINDINGS = collectionPrefix(GROUP, 'validatingadmissionpolicybindings');
const POLICIES = collectionPrefix(GROUP, 'validatingadmissionpolicies');
const NAMESPACES = collectionPrefix('', 'namespaces');

/** The stored Namespace named so (undefined: none). */
type NamespaceLookup = (name: string) => Obj | undefined;

/**
 * Namespace look-ups remembered while no Namespace is written: the same objects as the store's,
 * without making each request's key and looking it up (most requests come from few namespaces).
 */
function namespaceLookup(store: Store): NamespaceLookup {
  const changeCount = store.changeCounter(NAMESPACES);
  let seen = -1;
  const known = new Map<string, Obj | undefined>();
  return (name) => {
    const changes = changeCount();
    if (changes !== seen) {
      seen = changes;
      known.clear();
    }
    if (known.has(name)) return known.get(name);
    const ns = namespaceObject(name, store);
    known.set(name, ns);
    return ns;
  };
}

/** A binding as the plugin reads it, once per stored version. */
interface Binding {
  name: string;
  /** `spec.policyName` as the validation_failure annotation shows it. */
  policyName: string;
  actions: readonly string[];
  matchResources: MatchResources | undefined;
  paramRef: Obj | undefined;
}

/**
 * The bound policies, compiled, each with its bindings: policies in name order (as kube sorts
 * them), bindings in list order; a binding of a policy not stored is left out.
 */
interface Plan {
  /** The stores' change counts of the bindings and of the policies it was made at. */
  bindingChanges: number;
  policyChanges: number;
  policies: { policy: CompiledPolicy; bindings: Binding[] }[];
}

const NO_PARAMS: readonly (Obj | null)[] = Object.freeze([null]);

function bindingOf(s: StoredObject): Binding {
  const spec = ((s.object as Obj).spec ?? {}) as Obj;
  return {
    name: String(((s.object as Obj).metadata as Obj | undefined)?.name ?? ''),
    policyName: String(spec.policyName ?? ''),
    actions: Array.isArray(spec.validationActions) ? (spec.validationActions as string[]) : [],
    matchResources: (spec.matchResources || undefined) as MatchResources | undefined,
    paramRef: spec.paramRef as Obj | undefined,
  };
}

/** The plugin's work over `store`; `deps` may be filled in after (the authorizer comes after the chain). */
export function policyDispatch(store: Store, deps: PolicyPluginDeps): PolicyDispatch {
  // Keyed by the stored versions: a changed policy or binding is a new object, compiled anew.
  const compiled = new WeakMap<StoredObject, CompiledPolicy>();
  const compiledOf = (s: StoredObject): CompiledPolicy => {
    let c = compiled.get(s);
    if (!c) {
      c = compilePolicy(s.object as Obj);
      compiled.set(s, c);
    }
    return c;
  };
  const bindings = new WeakMap<StoredObject, Binding>();
  let plan: Plan | undefined;
  const bindingChangeCount = store.changeCounter(BINDINGS);
  const policyChangeCount = store.changeCounter(POLICIES);
  /**
   * The plan of the bindings and policies stored now: the last one while no binding nor policy
   * was written since (two look-ups a request), else made again from the stored versions, each
   * parsed or compiled once.
   */
  const planOf = (): Plan => {
    const bindingChanges = bindingChangeCount();
    const policyChanges = policyChangeCount();
    if (plan && plan.bindingChanges === bindingChanges && plan.policyChanges === policyChanges) return plan;
    const items = store.list(BINDINGS).items;
    const byPolicy = new Map<string, Binding[]>();
    for (const s of items) {
      let b = bindings.get(s);
      if (!b) {
        b = bindingOf(s);
        bindings.set(s, b);
      }
      const spec = ((s.object as Obj).spec ?? {}) as Obj;
      const name = typeof spec.policyName === 'string' ? spec.policyName : '';
      const list = byPolicy.get(name) ?? [];
      list.push(b);
      byPolicy.set(name, list);
    }
    const policies: Plan['policies'] = [];
    for (const name of [...byPolicy.keys()].sort()) {
      const stored = store.get(objectKey(GROUP, 'validatingadmissionpolicies', undefined, name));
      if (stored) policies.push({ policy: compiledOf(stored), bindings: byPolicy.get(name)! });
    }
    plan = { bindingChanges, policyChanges, policies };
    return plan;
  };
  const namespaces = namespaceLookup(store);
  // Equivalent resources come from the registry (once it is known).
  if (!deps.equivalents && deps.registry) deps.equivalents = registryEquivalents(deps.registry);
  return (op, t, obj, old, options) => {
    if (!deps.equivalents && deps.registry) deps.equivalents = registryEquivalents(deps.registry);
    const attrs = admissionAttributes(
      op,
      t,
      op === 'DELETE' ? undefined : obj,
      old,
      options as AdmissionOptions,
    );
    if (isExemptAdmissionConfigurationResource(attrs)) return;
    const request = new PolicyRequest(store, deps, attrs, options, namespaces);
    for (const entry of planOf().policies) request.check(entry.policy, entry.bindings);
    request.finish(t);
  };
}

function matchConstraints(
  match: MatchResources | undefined,
  attrs: AdmissionAttributes,
  store: Store,
  equivalents: EquivalentResources,
): RuleMatch | undefined {
  const m = match ?? {};
  if (!matchesNamespaceSelector(m.namespaceSelector, attrs, store)) return undefined;
  if (!matchesObjectSelector(m.objectSelector, attrs)) return undefined;
  return matchPolicyResources(m, attrs, equivalents);
}

/** A validation failure the binding audits (an entry of the validation_failure annotation). */
interface AuditedFailure {
  message: string;
  policy: string;
  binding: string;
  expressionIndex: number;
  validationActions: readonly string[];
}

/**
 * One request checked against the policies (kube's dispatcher): what they decided, gathered
 * as the policies are checked (the lists made on first use: a request every policy admits
 * makes none).
 */
class PolicyRequest {
  private denied: Denied[] | undefined;
  private failures: AuditedFailure[] | undefined;
  /** The current policy's audit annotations, by key. */
  private annotations: Map<string, string[]> | undefined;
  /** The request's namespace object (null: none), looked up once, when a binding first needs it. */
  private namespace: Obj | null | undefined;
  private readonly equivalents: EquivalentResources;

  constructor(
    private readonly store: Store,
    private readonly deps: PolicyPluginDeps,
    private readonly attrs: AdmissionAttributes,
    private readonly options: AdmissionOptions | undefined,
    private readonly namespaces: NamespaceLookup,
  ) {
    this.equivalents = deps.equivalents ?? exact;
  }

  private deny(d: Denied): void {
    this.denied ??= [];
    this.denied.push(d);
  }

  private configError(policy: CompiledPolicy, message: string, binding?: string): void {
    if (policy.failurePolicy === 'Ignore') return;
    this.deny({
      policy: policy.name,
      ...(binding !== undefined && { binding }),
      message:
        binding === undefined
          ? `failed to configure policy: ${message}`
          : `failed to configure binding: ${message}`,
    });
  }

  /** One policy through each of its bindings. */
  check(policy: CompiledPolicy, bindings: readonly Binding[]): void {
    const { attrs, store, deps } = this;
    let match: RuleMatch | undefined;
    try {
      match = matchConstraints(
        policy.spec.matchConstraints as MatchResources,
        attrs,
        store,
        this.equivalents,
      );
    } catch (e) {
      if (e instanceof ApiError && e.status.code === 404) throw e;
      this.configError(policy, (e as Error).message);
      return;
    }
    if (!match) return;
    if (
      policy.paramKind &&
      !deps.registry?.byKind(policy.paramKind.group, policy.paramKind.version, policy.paramKind.kind)
    ) {
      const pk = policy.paramKind;
      this.configError(
        policy,
        `failed to find resource referenced by paramKind: '${pk.group}/${pk.version}, Kind=${pk.kind}'`,
      );
      return;
    }
    this.annotations = undefined;
    for (const binding of bindings) {
      try {
        if (
          binding.matchResources &&
          !matchConstraints(binding.matchResources, attrs, store, this.equivalents)
        )
          continue;
      } catch (e) {
        if (e instanceof ApiError && e.status.code === 404) throw e;
        this.configError(policy, (e as Error).message, binding.name);
        continue;
      }
      let params: readonly (Obj | null)[];
      try {
        params =
          policy.paramKind && binding.paramRef
            ? collectParams(policy, binding.paramRef, attrs.namespace, store, deps.registry)
            : NO_PARAMS;
      } catch (e) {
        this.configError(policy, (e as Error).message, binding.name);
        continue;
      }
      if (params.length === 0) continue;
      const base = new AdmissionActivation(attrs, {
        matchedResource: match.resource,
        matchedKind: match.kind,
        namespace: this.namespaceObject(),
        params: params[0] === null || params[0] === undefined ? null : withTypeMeta(params[0], policy),
        authorizer: deps.authorizer,
      });
      for (let p = 0; p < params.length; p++) {
        // One activation per param, sharing the values that do not depend on it.
        const param = params[p];
        const activation =
          p === 0
            ? base
            : base.withParams(param === null || param === undefined ? null : withTypeMeta(param, policy));
        this.validate(policy, binding, activation);
      }
    }
    // (Set by validate, which the flow analysis does not see.)
    const annotations = this.annotations as Map<string, string[]> | undefined;
    if (annotations)
      for (const [key, values] of annotations)
        addAnnotation(this.options, `${policy.name}/${key}`, values.join(', '));
  }

  /** The namespace object: none for cluster-scoped requests nor for a Namespace itself; a missing one fails the request. */
  private namespaceObject(): Obj | null {
    if (this.namespace !== undefined) return this.namespace;
    const attrs = this.attrs;
    let namespace: Obj | null = null;
    const isNamespace =
      attrs.kind.group === '' && attrs.kind.version === 'v1' && attrs.kind.kind === 'Namespace';
    if (attrs.namespace !== '' && !isNamespace) {
      const ns = this.namespaces(attrs.namespace);
      if (!ns) throw ApiError.notFound({ group: '', resource: 'namespaces' }, attrs.namespace);
      namespace = ns;
    }
    this.namespace = namespace;
    return namespace;
  }

  /**
   * `validator.Validate`: one policy with one param; each decision other than a plain admit is
   * enforced (and counted) as the binding's actions say, in the order of the validations.
   */
  private validate(policy: CompiledPolicy, binding: Binding, activation: AdmissionActivation): void {
    const onError: Decision['action'] = policy.failurePolicy === 'Ignore' ? 'Admit' : 'Deny';
    if (policy.matchConditions.length > 0) {
      let errors: string[] | undefined;
      for (const c of policy.matchConditions) {
        try {
          if (c.expression.evaluate(activation) === false) return;
        } catch (e) {
          errors ??= [];
          errors.push((e as Error).message);
        }
      }
      if (errors) {
        if (onError === 'Admit') return;
        const message = errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`;
        this.decided(policy, binding, { action: 'Deny', message, error: true }, 0);
        return;
      }
    }
    const validations = policy.validations;
    for (let i = 0; i < validations.length; i++) {
      const v = validations[i]!;
      let result: unknown;
      const start = performance.now();
      try {
        result = v.expression.evaluate(activation);
      } catch (e) {
        const elapsed = (performance.now() - start) / 1000;
        this.decided(
          policy,
          binding,
          { action: onError, message: (e as Error).message, error: true, elapsed },
          i,
        );
        continue;
      }
      // An admitted validation is neither counted nor timed (kube only counts the others).
      if (result === true) continue;
      const elapsed = (performance.now() - start) / 1000;
      this.decided(
        policy,
        binding,
        { action: 'Deny', message: failureMessage(v, activation), reason: v.reason ?? 'Invalid', elapsed },
        i,
      );
    }
    for (const a of policy.auditAnnotations) {
      let value: unknown;
      try {
        value = a.expression.evaluate(activation);
      } catch (e) {
        if (onError === 'Deny')
          this.deny({ policy: policy.name, binding: binding.name, message: (e as Error).message });
        continue;
      }
      if (value === null || value === undefined) continue;
      if (typeof value !== 'string') {
        this.deny({
          policy: policy.name,
          binding: binding.name,
          message: `valueExpression '${a.valueExpression}' resulted in unsupported return type: ${celTypeName(value)}. Return type must be either string or null.`,
        });
        continue;
      }
      const trimmed = value.trim();
      if (!trimmed) continue;
      const v =
        trimmed.length > MAX_AUDIT_ANNOTATION_VALUE ? trimmed.slice(0, MAX_AUDIT_ANNOTATION_VALUE) : trimmed;
      this.annotations ??= new Map();
      const annotations = this.annotations;
      const list = annotations.get(a.key) ?? [];
      if (!list.includes(v)) list.push(v);
      annotations.set(a.key, list);
    }
  }

  /** Enforces one decision of validation `index` (an admit with an error is only counted). */
  private decided(policy: CompiledPolicy, binding: Binding, d: Decision, index: number): void {
    const metrics = this.deps.metrics;
    if (d.action !== 'Deny') {
      if (d.error)
        metrics?.observe(
          policy.name,
          binding.name,
          errorType(true, d.message ?? ''),
          'allow',
          d.elapsed ?? 0,
        );
      return;
    }
    for (const action of binding.actions) {
      metrics?.observe(
        policy.name,
        binding.name,
        errorType(d.error === true, d.message ?? ''),
        action === 'Deny' ? 'deny' : action === 'Audit' ? 'audit' : 'warn',
        d.elapsed ?? 0,
      );
      if (action === 'Deny')
        this.deny({
          policy: policy.name,
          binding: binding.name,
          message: d.message ?? '',
          ...(d.reason && { reason: d.reason }),
        });
      else if (action === 'Audit') {
        this.failures ??= [];
        this.failures.push({
          message: d.message ?? '',
          policy: binding.policyName,
          binding: binding.name,
          expressionIndex: index,
          validationActions: binding.actions,
        });
      } else if (action === 'Warn')
        this.options?.warnings?.push(
          `Validation failed for ValidatingAdmissionPolicy '${policy.name}' with binding '${binding.name}': ${d.message ?? ''}`,
        );
    }
  }

  /** Publishes the audited failures and throws the first denial, if any. */
  finish(t: ResourceType): void {
    if (this.failures)
      addAnnotation(
        this.options,
        'validation.policy.admission.k8s.io/validation_failure',
        JSON.stringify(this.failures),
      );
    const first = this.denied?.[0];
    if (!first) return;
    const message =
      first.binding !== undefined
        ? `ValidatingAdmissionPolicy '${first.policy}' with binding '${first.binding}' denied request: ${first.message}`
        : `ValidatingAdmissionPolicy '${first.policy}' denied request: ${first.message}`;
    throw policyDenied(t, this.attrs, message, first.reason || 'Invalid');
  }
}

/** The message of a failed validation: its messageExpression's, else its message, else the expression. */
function failureMessage(v: CompiledValidation, activation: AdmissionActivation): string {
  let message = '';
  if (v.messageExpression) {
    try {
      const m = v.messageExpression.evaluate(activation);
      if (typeof m === 'string') {
        message = m.trim();
        if (Buffer.byteLength(message) > MAX_MESSAGE_EXPRESSION_BYTES || message.includes('\n')) message = '';
      }
    } catch {
      // kube logs a failed messageExpression and falls back to the message.
    }
  }
  if (message === '' && v.message) message = v.message.trim();
  if (message === '') message = `failed expression: ${v.expression.expression.trim()}`;
  return message;
}

function addAnnotation(options: AdmissionOptions | undefined, key: string, value: string): void {
  const to = options?.auditAnnotations;
  if (to && to[key] === undefined) to[key] = value;
}

/** Params of a built-in kind carry their apiVersion and kind, as kube's `wrappedParam` adds them. */
function withTypeMeta(param: Obj, policy: CompiledPolicy): Obj {
  if (param.apiVersion && param.kind) return param;
  const pk = policy.paramKind!;
  return { ...param, apiVersion: pk.group ? `${pk.group}/${pk.version}` : pk.version, kind: pk.kind };
}

/** `admission.NewForbidden` with the decision's reason and its code (`reasonToCode`), and the message as a cause. */
function policyDenied(
  t: ResourceType,
  attrs: AdmissionAttributes,
  message: string,
  reason: string,
): ApiError {
  const obj = attrs.object ?? attrs.oldObject;
  const m = (obj?.metadata ?? {}) as Obj;
  const name =
    attrs.name ||
    (typeof m.name === 'string' && m.name
      ? m.name
      : typeof m.generateName === 'string' && m.generateName
        ? m.generateName
        : 'Unknown');
  const forbidden = ApiError.forbidden(
    { group: attrs.resource.group, resource: attrs.resource.resource },
    name,
    message,
  );
  const code =
    reason === 'Forbidden'
      ? 403
      : reason === 'Unauthorized'
        ? 401
        : reason === 'RequestEntityTooLarge'
          ? 413
          : 422;
  const status = forbidden.status as Status;
  void t;
  return new ApiError({
    ...status,
    code,
    reason: reason as Status['reason'],
    details: { ...status.details, causes: [{ message }] },
  } as Status);
}

/** cel-go's name of a value's type. */
function celTypeName(v: unknown): string {
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return 'double';
  if (typeof v === 'boolean') return 'bool';
  if (Array.isArray(v)) return 'list';
  if (v instanceof Uint8Array) return 'bytes';
  if (v instanceof Date) return 'google.protobuf.Timestamp';
  return typeof v === 'object' ? 'map' : typeof v;
}
