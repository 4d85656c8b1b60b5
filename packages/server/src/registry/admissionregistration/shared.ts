/** What the admissionregistration.k8s.io/v1 kinds share: the behaviour of Mutating- and ValidatingWebhookConfigurations, match resources, printer cells. */
import { type StatusCause, validateWebhookService, validateWebhookURL } from 'kubeloop/api';
import type { AdmissionCelEnv } from '../../admission/cel/compile.js';
import { lazyModule } from '../../util/lazy-module.js';
import { ageColumn, col, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import {
  def,
  dig,
  duplicate,
  GoValue,
  invalid,
  isDNS1035Label,
  isDNS1123Subdomain,
  isObj,
  isQualifiedName,
  notSupported,
  numOr,
  type Obj,
  objs,
  required,
  since,
  str,
  strs,
  validateLabelSelector,
} from '../shared/util.js';

const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'DELETE', 'UPDATE'];
const SCOPES = ['*', 'Cluster', 'Namespaced'];
const REVIEW_VERSIONS = ['v1', 'v1beta1'];
const SIDE_EFFECTS = ['None', 'NoneOnDryRun'];

/** `SetDefaults_ValidatingWebhook` / `SetDefaults_MutatingWebhook`, `SetDefaults_Rule`, `SetDefaults_ServiceReference`. */
function defaultWebhook(hook: Obj, mutating: boolean): void {
  def(hook, 'failurePolicy', 'Fail');
  def(hook, 'matchPolicy', 'Equivalent');
  if (!isObj(hook.namespaceSelector)) hook.namespaceSelector = {};
  if (!isObj(hook.objectSelector)) hook.objectSelector = {};
  if (numOr(hook.timeoutSeconds) === undefined) hook.timeoutSeconds = 10;
  if (mutating) def(hook, 'reinvocationPolicy', 'Never');
  for (const rule of objs(hook.rules)) def(rule, 'scope', '*');
  const service = dig(hook, 'clientConfig', 'service');
  if (isObj(service) && numOr(service.port) === undefined) service.port = 443;
}

/** `IsFullyQualifiedName`. */
function fullyQualified(field: string, name: string): StatusCause[] {
  if (!name) return [required(field)];
  const errs = isDNS1123Subdomain(name);
  if (errs.length > 0) return [invalid(field, name, errs.join(','))];
  if (name.split('.').length < 3)
    return [invalid(field, name, 'should be a domain with at least three segments separated by dots')];
  return [];
}

/** `validateResources`: resources and `resource/subresource` pairs, wildcards not beside what they cover. */
function validateResources(resources: string[], p: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (resources.length === 0) out.push(required(p));
  const wildSub = new Set<string>();
  const wildRes = new Set<string>();
  let plain = false;
  resources.forEach((r, i) => {
    if (!r) {
      out.push(required(`${p}[${i}]`));
      return;
    }
    const slash = r.indexOf('/');
    if (slash < 0) {
      plain = r !== '*';
      return;
    }
    const [res, sub] = [r.slice(0, slash), r.slice(slash + 1)];
    if (wildSub.has(res))
      out.push(invalid(`${p}[${i}]`, r, `if '${res}/*' is present, must not specify ${r}`));
    if (wildRes.has(sub))
      out.push(invalid(`${p}[${i}]`, r, `if '*/${sub}' is present, must not specify ${r}`));
    if (sub === '*') wildSub.add(res);
    if (res === '*') wildRes.add(sub);
  });
  if (resources.length > 1 && resources.includes('*/*'))
    out.push(invalid(p, resources, "if '*/*' is present, must not specify other resources"));
  if (resources.includes('*') && plain)
    out.push(
      invalid(p, resources, "if '*' is present, must not specify other resources without subresources"),
    );
  return out;
}

/** `validateRuleWithOperations`. */
export function validateRule(rule: Obj, p: string): StatusCause[] {
  const out: StatusCause[] = [];
  const ops = strs(rule.operations);
  if (ops.length === 0) out.push(required(`${p}.operations`));
  if (ops.length > 1 && ops.includes('*')) {
    out.push(
      invalid(
        `${p}.operations`,
        new GoValue(`[]admissionregistration.OperationType{${ops.map((o) => JSON.stringify(o)).join(', ')}}`),
        "if '*' is present, must not specify other operations",
      ),
    );
  }
  ops.forEach((op, i) => {
    if (!OPERATIONS.includes(op)) out.push(notSupported(`${p}.operations[${i}]`, op, OPERATIONS));
  });
  const groups = strs(rule.apiGroups);
  if (groups.length === 0) out.push(required(`${p}.apiGroups`));
  if (groups.length > 1 && groups.includes('*')) {
    out.push(invalid(`${p}.apiGroups`, groups, "if '*' is present, must not specify other API groups"));
  }
  const versions = strs(rule.apiVersions);
  if (versions.length === 0) out.push(required(`${p}.apiVersions`));
  if (versions.length > 1 && versions.includes('*')) {
    out.push(invalid(`${p}.apiVersions`, versions, "if '*' is present, must not specify other API versions"));
  }
  versions.forEach((v, i) => {
    if (!v) out.push(required(`${p}.apiVersions[${i}]`));
  });
  out.push(...validateResources(strs(rule.resources), `${p}.resources`));
  const scope = str(rule.scope);
  if (rule.scope !== undefined && !SCOPES.includes(scope))
    out.push(notSupported(`${p}.scope`, scope, SCOPES));
  return out;
}

/** A webhook's `clientConfig`: exactly one of a URL and a Service, each as kube checks it. */
function validateClientConfig(cc: unknown, p: string): StatusCause[] {
  const c = isObj(cc) ? cc : {};
  const hasURL = typeof c.url === 'string';
  const service = isObj(c.service) ? c.service : undefined;
  if (hasURL === (service !== undefined)) return [required(p, 'exactly one of url or service is required')];
  if (hasURL) return validateWebhookURL(`${p}.url`, str(c.url));
  const path = typeof service!.path === 'string' ? service!.path : undefined;
  // kube passes the Service's name and namespace in each other's place (the callee takes the
  // namespace first): a missing namespace is reported as "service name is required", and back.
  return validateWebhookService(
    `${p}.service`,
    str(service!.name),
    str(service!.namespace),
    path,
    numOr(service!.port) ?? 443,
  );
}

/**
 * The CEL compiler of admission expressions: loaded by the first write of a kind that has
 * expressions (webhook configurations, ValidatingAdmissionPolicies), through the kind's `load`.
 */
export const admissionCel = lazyModule(() => import('../../admission/cel/compile.js'));

/** The environment webhooks' matchConditions compile in: no params, with the authorizer (kube's stateless compiler). */
let conditionEnv: AdmissionCelEnv | undefined;

/**
 * `validateMatchConditions` of a webhook: at most 64, each with a qualified, unique name and an
 * expression that compiles to a bool, so that an invalid expression is refused when the
 * configuration is written, not found out on the first request it should match.
 */
function validateMatchConditions(conditions: Obj[], p: string): StatusCause[] {
  const out: StatusCause[] = [];
  if (conditions.length > 64)
    out.push({
      reason: 'FieldValueTooMany',
      field: p,
      message: `Too many: ${conditions.length}: must have at most 64 items`,
    });
  const names = new Set<string>();
  conditions.forEach((c, i) => {
    const e = str(c.expression).trim();
    if (!e) out.push(required(`${p}[${i}].expression`));
    else {
      conditionEnv ??= new (admissionCel.get().AdmissionCelEnv)({ params: false, authorizer: true });
      const error = conditionEnv.compile(e, { returnTypes: ['bool'] }).error;
      if (error) out.push(invalid(`${p}[${i}].expression`, e, error));
    }
    const name = str(c.name);
    if (!name) out.push(required(`${p}[${i}].name`));
    else {
      for (const m of isQualifiedName(name)) out.push(invalid(`${p}[${i}].name`, name, m));
      if (names.has(name)) out.push(duplicate(`${p}[${i}].name`, name));
      names.add(name);
    }
  });
  return out;
}

function validateWebhooks(obj: Obj, mutating: boolean): StatusCause[] {
  const out: StatusCause[] = [];
  const names = new Set<string>();
  objs(obj.webhooks).forEach((hook, i) => {
    const p = `webhooks[${i}]`;
    const name = str(hook.name);
    out.push(...fullyQualified(`${p}.name`, name));
    objs(hook.rules).forEach((r, j) => {
      out.push(...validateRule(r, `${p}.rules[${j}]`));
    });
    const fp = str(hook.failurePolicy);
    if (hook.failurePolicy !== undefined && fp !== 'Fail' && fp !== 'Ignore') {
      out.push(notSupported(`${p}.failurePolicy`, fp, ['Fail', 'Ignore']));
    }
    const mp = str(hook.matchPolicy);
    if (hook.matchPolicy !== undefined && mp !== 'Equivalent' && mp !== 'Exact') {
      out.push(notSupported(`${p}.matchPolicy`, mp, ['Equivalent', 'Exact']));
    }
    if (hook.sideEffects === undefined || hook.sideEffects === null) {
      out.push(required(`${p}.sideEffects`, `must specify one of ${SIDE_EFFECTS.join(', ')}`));
    } else if (!SIDE_EFFECTS.includes(str(hook.sideEffects))) {
      out.push(notSupported(`${p}.sideEffects`, str(hook.sideEffects), SIDE_EFFECTS));
    }
    const timeout = numOr(hook.timeoutSeconds);
    if (timeout !== undefined && (timeout > 30 || timeout < 1)) {
      out.push(invalid(`${p}.timeoutSeconds`, timeout, 'the timeout value must be between 1 and 30 seconds'));
    }
    if (isObj(hook.namespaceSelector))
      out.push(...validateLabelSelector(hook.namespaceSelector, `${p}.namespaceSelector`));
    if (isObj(hook.objectSelector))
      out.push(...validateLabelSelector(hook.objectSelector, `${p}.objectSelector`));
    if (mutating) {
      const rp = str(hook.reinvocationPolicy);
      if (hook.reinvocationPolicy !== undefined && rp !== 'Never' && rp !== 'IfNeeded') {
        out.push(notSupported(`${p}.reinvocationPolicy`, rp, ['IfNeeded', 'Never']));
      }
    }
    out.push(...validateClientConfig(hook.clientConfig, `${p}.clientConfig`));
    out.push(...validateMatchConditions(objs(hook.matchConditions), `${p}.matchConditions`));
    const versions = strs(hook.admissionReviewVersions);
    const vp = `${p}.admissionReviewVersions`;
    if (versions.length === 0) out.push(required(vp, `must specify one of ${REVIEW_VERSIONS.join(', ')}`));
    else {
      const seen = new Set<string>();
      versions.forEach((v, j) => {
        if (seen.has(v)) out.push(duplicate(`${vp}[${j}]`, v));
        seen.add(v);
        for (const m of isDNS1035Label(v)) out.push(invalid(`${vp}[${j}]`, v, m));
      });
      if (!versions.some((v) => REVIEW_VERSIONS.includes(v))) {
        out.push(invalid(vp, versions, `must include at least one of ${REVIEW_VERSIONS.join(', ')}`));
      }
    }
    if (name) {
      if (names.has(name)) out.push(duplicate(`${p}.name`, name));
      names.add(name);
    }
  });
  return out;
}

export const webhookConfiguration = (mutating: boolean): KindBehaviour => ({
  defaults(obj) {
    for (const hook of objs(obj.webhooks)) defaultWebhook(hook, mutating);
  },
  validate: (obj) => validateWebhooks(obj, mutating),
  load: admissionCel.load,
  columns: [
    nameColumn(),
    col('Webhooks', 'integer', 'Webhooks indicates the number of webhooks registered in this configuration'),
    ageColumn(),
  ],
  row: (obj, now) => [
    str(dig(obj, 'metadata', 'name')),
    objs(obj.webhooks).length,
    since(dig(obj, 'metadata', 'creationTimestamp'), now),
  ],
});
export const AR = 'io.k8s.api.admissionregistration.v1';
export const nameOf = (obj: Obj): string => str(dig(obj, 'metadata', 'name'));
export const ageOf = (obj: Obj, now: Date): string => since(dig(obj, 'metadata', 'creationTimestamp'), now);
/** `SetDefaults_MatchResources` and `SetDefaults_NamedRuleWithOperations`'s scope. */
export function defaultMatchResources(m: Obj): void {
  def(m, 'matchPolicy', 'Equivalent');
  if (!isObj(m.namespaceSelector)) m.namespaceSelector = {};
  if (!isObj(m.objectSelector)) m.objectSelector = {};
  for (const list of ['resourceRules', 'excludeResourceRules'])
    for (const rule of objs(m[list])) def(rule, 'scope', '*');
}
