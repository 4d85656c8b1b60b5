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
import { objectKey, type Store } from '../../storage/store.js';
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
import { type CompiledPolicy, compilePolicy } from './compile.js';
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

/** The plugin's check of one request against `bindings` (the stored ones, at least one). */
export type PolicyDispatch = (
  op: AdmissionAttributes['operation'],
  t: ResourceType,
  obj: Obj,
  old: Obj | undefined,
  options: AdmissionOptions | undefined,
  bindings: readonly StoredObject[],
) => void;

/** The plugin's work over `store`; `deps` may be filled in after (the authorizer comes after the chain). */
export function policyDispatch(store: Store, deps: PolicyPluginDeps): PolicyDispatch {
  const compiled = new WeakMap<StoredObject, CompiledPolicy>();
  const compiledOf = (s: StoredObject): CompiledPolicy => {
    let c = compiled.get(s);
    if (!c) {
      c = compilePolicy(s.object as Obj);
      compiled.set(s, c);
    }
    return c;
  };
  // Equivalent resources come from the registry (once it is known).
  if (!deps.equivalents && deps.registry) deps.equivalents = registryEquivalents(deps.registry);
  return (op, t, obj, old, options, bindings) => {
    if (!deps.equivalents && deps.registry) deps.equivalents = registryEquivalents(deps.registry);
    const attrs = admissionAttributes(
      op,
      t,
      op === 'DELETE' ? undefined : obj,
      old,
      options as AdmissionOptions,
    );
    if (isExemptAdmissionConfigurationResource(attrs)) return;
    const byPolicy = new Map<string, Obj[]>();
    for (const b of bindings) {
      const spec = ((b.object as Obj).spec ?? {}) as Obj;
      const name = typeof spec.policyName === 'string' ? spec.policyName : '';
      const list = byPolicy.get(name) ?? [];
      list.push(b.object as Obj);
      byPolicy.set(name, list);
    }
    dispatch(store, deps, t, attrs, options, byPolicy, compiledOf);
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

function dispatch(
  store: Store,
  deps: PolicyPluginDeps,
  t: ResourceType,
  attrs: AdmissionAttributes,
  options: AdmissionOptions | undefined,
  byPolicy: Map<string, Obj[]>,
  compiledOf: (s: StoredObject) => CompiledPolicy,
): void {
  const denied: Denied[] = [];
  const failures: {
    message: string;
    policy: string;
    binding: string;
    expressionIndex: number;
    validationActions: string[];
  }[] = [];
  const equivalents = deps.equivalents ?? exact;

  for (const policyName of [...byPolicy.keys()].sort()) {
    const stored = store.get(objectKey(GROUP, 'validatingadmissionpolicies', undefined, policyName));
    if (!stored) continue;
    const policy = compiledOf(stored);
    const fail = policy.failurePolicy !== 'Ignore';
    const configError = (message: string, binding?: string) => {
      if (!fail) return;
      denied.push({
        policy: policy.name,
        ...(binding !== undefined && { binding }),
        message:
          binding === undefined
            ? `failed to configure policy: ${message}`
            : `failed to configure binding: ${message}`,
      });
    };
    let match: RuleMatch | undefined;
    try {
      match = matchConstraints(policy.spec.matchConstraints as MatchResources, attrs, store, equivalents);
    } catch (e) {
      if (e instanceof ApiError && e.status.code === 404) throw e;
      configError((e as Error).message);
      continue;
    }
    if (!match) continue;
    if (
      policy.paramKind &&
      !deps.registry?.byKind(policy.paramKind.group, policy.paramKind.version, policy.paramKind.kind)
    ) {
      const pk = policy.paramKind;
      configError(
        `failed to find resource referenced by paramKind: '${pk.group}/${pk.version}, Kind=${pk.kind}'`,
      );
      continue;
    }
    const annotations = new Map<string, string[]>();
    for (const binding of byPolicy.get(policyName) ?? []) {
      const bname = String((binding.metadata as Obj | undefined)?.name ?? '');
      const bspec = (binding.spec ?? {}) as Obj;
      const actions = Array.isArray(bspec.validationActions) ? (bspec.validationActions as string[]) : [];
      try {
        if (
          bspec.matchResources &&
          !matchConstraints(bspec.matchResources as MatchResources, attrs, store, equivalents)
        )
          continue;
      } catch (e) {
        if (e instanceof ApiError && e.status.code === 404) throw e;
        configError((e as Error).message, bname);
        continue;
      }
      let params: (Obj | null)[];
      try {
        params = collectParams(
          policy,
          bspec.paramRef as Obj | undefined,
          attrs.namespace,
          store,
          deps.registry,
        );
      } catch (e) {
        configError((e as Error).message, bname);
        continue;
      }
      if (params.length === 0) continue;
      // The namespace object: none for cluster-scoped requests nor for a Namespace itself.
      let namespace: Obj | null = null;
      const isNamespace =
        attrs.kind.group === '' && attrs.kind.version === 'v1' && attrs.kind.kind === 'Namespace';
      if (attrs.namespace !== '' && !isNamespace) {
        const ns = namespaceObject(attrs.namespace, store);
        if (!ns) throw ApiError.notFound({ group: '', resource: 'namespaces' }, attrs.namespace);
        namespace = ns;
      }
      const base = new AdmissionActivation(attrs, {
        matchedResource: match.resource,
        matchedKind: match.kind,
        namespace,
        params: params[0] === null || params[0] === undefined ? null : withTypeMeta(params[0], policy),
        ...(deps.authorizer && { authorizer: deps.authorizer }),
      });
      for (let p = 0; p < params.length; p++) {
        // One activation per param, sharing the values that do not depend on it.
        const param = params[p];
        const activation =
          p === 0
            ? base
            : base.withParams(param === null || param === undefined ? null : withTypeMeta(param, policy));
        const result = validate(policy, activation);
        result.decisions.forEach((d, i) => {
          const metrics = deps.metrics;
          if (d.action !== 'Deny') {
            if (d.error)
              metrics?.observe(policy.name, bname, errorType(true, d.message ?? ''), 'allow', d.elapsed ?? 0);
            return;
          }
          for (const action of actions) {
            metrics?.observe(
              policy.name,
              bname,
              errorType(d.error === true, d.message ?? ''),
              action === 'Deny' ? 'deny' : action === 'Audit' ? 'audit' : 'warn',
              d.elapsed ?? 0,
            );
            if (action === 'Deny')
              denied.push({
                policy: policy.name,
                binding: bname,
                message: d.message ?? '',
                ...(d.reason && { reason: d.reason }),
              });
            else if (action === 'Audit')
              failures.push({
                message: d.message ?? '',
                policy: String(bspec.policyName ?? ''),
                binding: bname,
                expressionIndex: i,
                validationActions: actions,
              });
            else if (action === 'Warn')
              options?.warnings?.push(
                `Validation failed for ValidatingAdmissionPolicy '${policy.name}' with binding '${bname}': ${d.message ?? ''}`,
              );
          }
        });
        for (const a of result.annotations) {
          if ('error' in a) {
            denied.push({ policy: policy.name, binding: bname, message: a.error });
            continue;
          }
          const list = annotations.get(a.key) ?? [];
          if (!list.includes(a.value)) list.push(a.value);
          annotations.set(a.key, list);
        }
      }
    }
    for (const [key, values] of annotations)
      addAnnotation(options, `${policy.name}/${key}`, values.join(', '));
  }
  if (failures.length > 0)
    addAnnotation(options, 'validation.policy.admission.k8s.io/validation_failure', JSON.stringify(failures));
  const first = denied[0];
  if (!first) return;
  const message =
    first.binding !== undefined
      ? `ValidatingAdmissionPolicy '${first.policy}' with binding '${first.binding}' denied request: ${first.message}`
      : `ValidatingAdmissionPolicy '${first.policy}' denied request: ${first.message}`;
  throw policyDenied(t, attrs, message, first.reason || 'Invalid');
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

type AnnotationResult = { key: string; value: string } | { error: string };

/** `validator.Validate`: one policy with one param. */
function validate(
  policy: CompiledPolicy,
  activation: AdmissionActivation,
): { decisions: Decision[]; annotations: AnnotationResult[] } {
  const onError: Decision['action'] = policy.failurePolicy === 'Ignore' ? 'Admit' : 'Deny';
  if (policy.matchConditions.length > 0) {
    const errors: string[] = [];
    for (const c of policy.matchConditions) {
      try {
        if (c.expression.evaluate(activation) === false) return { decisions: [], annotations: [] };
      } catch (e) {
        errors.push((e as Error).message);
      }
    }
    if (errors.length > 0) {
      if (onError === 'Admit') return { decisions: [], annotations: [] };
      const message = errors.length === 1 ? errors[0]! : `[${errors.join(', ')}]`;
      return { decisions: [{ action: 'Deny', message, error: true }], annotations: [] };
    }
  }
  const decisions = policy.validations.map((v): Decision => {
    let result: unknown;
    const start = performance.now();
    try {
      result = v.expression.evaluate(activation);
    } catch (e) {
      return {
        action: onError,
        message: (e as Error).message,
        error: true,
        elapsed: (performance.now() - start) / 1000,
      };
    }
    const elapsed = (performance.now() - start) / 1000;
    if (result === true) return { action: 'Admit', elapsed };
    let message = '';
    if (v.messageExpression) {
      try {
        const m = v.messageExpression.evaluate(activation);
        if (typeof m === 'string') {
          message = m.trim();
          if (Buffer.byteLength(message) > MAX_MESSAGE_EXPRESSION_BYTES || message.includes('\n'))
            message = '';
        }
      } catch {
        // kube logs a failed messageExpression and falls back to the message.
      }
    }
    if (message === '' && v.message) message = v.message.trim();
    if (message === '') message = `failed expression: ${v.expression.expression.trim()}`;
    return { action: 'Deny', message, reason: v.reason ?? 'Invalid', elapsed };
  });
  const annotations: AnnotationResult[] = [];
  for (const a of policy.auditAnnotations) {
    let value: unknown;
    try {
      value = a.expression.evaluate(activation);
    } catch (e) {
      if (onError === 'Deny') annotations.push({ error: (e as Error).message });
      continue;
    }
    if (value === null || value === undefined) continue;
    if (typeof value !== 'string') {
      annotations.push({
        error: `valueExpression '${a.valueExpression}' resulted in unsupported return type: ${celTypeName(value)}. Return type must be either string or null.`,
      });
      continue;
    }
    const v = value.trim();
    if (v)
      annotations.push({
        key: a.key,
        value: v.length > MAX_AUDIT_ANNOTATION_VALUE ? v.slice(0, MAX_AUDIT_ANNOTATION_VALUE) : v,
      });
  }
  return { decisions, annotations };
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
