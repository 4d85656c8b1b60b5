/**
 * The audit policy: `audit.k8s.io/v1 Policy` read from `--audit-policy-file`, validated and
 * evaluated as k8s.io/apiserver's `pkg/audit/policy` (reader.go, checker.go) and
 * `pkg/apis/audit/validation` do it. The first rule that matches a request decides its level,
 * the stages left out and whether managed fields are.
 */
import { readFileSync } from 'node:fs';
import { isDNS1123Subdomain } from 'kubeloop/api';
import { parseYamlBounded } from '../util/yaml.js';

/** How much of a request an event records. */
export type AuditLevel = 'None' | 'Metadata' | 'Request' | 'RequestResponse';
/** The stages of a request an event is written at. */
export type AuditStage = 'RequestReceived' | 'ResponseStarted' | 'ResponseComplete' | 'Panic';

const LEVELS: readonly AuditLevel[] = ['None', 'Metadata', 'Request', 'RequestResponse'];
const STAGES: readonly AuditStage[] = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'];

/** The order of levels: `Metadata` < `Request` < `RequestResponse`. */
export const levelRank = (level: AuditLevel): number => LEVELS.indexOf(level);

/** A rule's `resources` entry (`GroupResources`). */
export interface GroupResources {
  group?: string;
  resources?: string[];
  resourceNames?: string[];
}

/** `audit.k8s.io/v1 PolicyRule`. */
export interface PolicyRule {
  level: AuditLevel;
  users?: string[];
  userGroups?: string[];
  verbs?: string[];
  resources?: GroupResources[];
  namespaces?: string[];
  nonResourceURLs?: string[];
  omitStages?: AuditStage[];
  omitManagedFields?: boolean;
}

/** `audit.k8s.io/v1 Policy`. */
export interface AuditPolicy {
  rules: PolicyRule[];
  omitStages?: AuditStage[];
  omitManagedFields?: boolean;
}

/** What the policy decides for one request (`RequestAuditConfig`). */
export interface RequestAuditConfig {
  level: AuditLevel;
  omitStages: readonly AuditStage[];
  omitManagedFields: boolean;
}

/** The request attributes rules match (`authorizer.Attributes`); `user` is unset for a request that failed authentication. */
export interface AuditAttributes {
  user?: { username: string; groups: readonly string[] };
  verb: string;
  isResourceRequest: boolean;
  namespace: string;
  apiGroup: string;
  resource: string;
  subresource: string;
  name: string;
  path: string;
}

/**
 * Reads and validates a policy file as kube-apiserver does at start (`LoadPolicyFromFile`);
 * throws kube's message (`loading audit policy file: …: from file <path>`) for a bad one.
 */
export function loadPolicyFile(path: string): PolicyEvaluator {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new Error(
      `loading audit policy file: failed to read file path ${JSON.stringify(path)}: ${String(err)}`,
    );
  }
  try {
    return new PolicyEvaluator(parsePolicy(text));
  } catch (err) {
    throw new Error(`loading audit policy file: ${(err as Error).message}: from file ${path}`);
  }
}

/** `LoadPolicyFromBytes`: decodes (YAML or JSON), checks the group and version, validates. */
export function parsePolicy(text: string): AuditPolicy {
  let doc: unknown;
  try {
    doc = parseYamlBounded(text, {});
  } catch (err) {
    throw new Error(`failed decoding: ${(err as Error).message}`);
  }
  if (!isRecord(doc))
    throw new Error(`failed decoding: couldn't get version/kind; json parse error: ${text.slice(0, 200)}`);
  const apiVersion = typeof doc.apiVersion === 'string' ? doc.apiVersion : '';
  const kind = typeof doc.kind === 'string' && doc.kind !== '' ? doc.kind : 'Policy';
  // A document without apiVersion decodes as the internal version, which the reader refuses.
  if (apiVersion === '')
    throw new Error(`unknown group version field audit.k8s.io/__internal, Kind=${kind} in policy`);
  if (apiVersion !== 'audit.k8s.io/v1' || kind !== 'Policy') {
    throw new Error(
      `failed decoding: no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion)} in scheme "k8s.io/apiserver/pkg/audit/scheme.go:30"`,
    );
  }
  const policy = decodePolicy(doc);
  const errors = validatePolicy(policy);
  if (errors.length === 1) throw new Error(errors[0]);
  if (errors.length > 1) throw new Error(`[${errors.join(', ')}]`);
  if (policy.rules.length === 0) throw new Error('loaded illegal policy with 0 rules');
  return policy;
}

/** The policy's fields, typed as Go's decoder types them (a wrong type fails the decoding). */
function decodePolicy(doc: Record<string, unknown>): AuditPolicy {
  const rules = list(doc.rules, 'Policy.rules', '[]v1.PolicyRule').map((r) => {
    if (!isRecord(r)) throw typeError(r, `Policy.rules`, 'v1.PolicyRule');
    const rule: PolicyRule = { level: str(r.level, 'Policy.rules.level', 'v1.Level') as AuditLevel };
    for (const f of ['users', 'userGroups', 'verbs', 'namespaces', 'nonResourceURLs'] as const) {
      if (r[f] !== undefined && r[f] !== null) rule[f] = strings(r[f], `Policy.rules.${f}`);
    }
    if (r.omitStages !== undefined && r.omitStages !== null)
      rule.omitStages = strings(r.omitStages, 'Policy.rules.omitStages') as AuditStage[];
    if (r.omitManagedFields !== undefined && r.omitManagedFields !== null)
      rule.omitManagedFields = bool(r.omitManagedFields, 'Policy.rules.omitManagedFields');
    if (r.resources !== undefined && r.resources !== null) {
      rule.resources = list(r.resources, 'Policy.rules.resources', '[]v1.GroupResources').map((g) => {
        if (!isRecord(g)) throw typeError(g, 'Policy.rules.resources', 'v1.GroupResources');
        return {
          ...(g.group !== undefined &&
            g.group !== null && { group: str(g.group, 'Policy.rules.resources.group') }),
          ...(g.resources != null && { resources: strings(g.resources, 'Policy.rules.resources.resources') }),
          ...(g.resourceNames != null && {
            resourceNames: strings(g.resourceNames, 'Policy.rules.resources.resourceNames'),
          }),
        };
      });
    }
    return rule;
  });
  return {
    rules,
    ...(doc.omitStages != null && {
      omitStages: strings(doc.omitStages, 'Policy.omitStages') as AuditStage[],
    }),
    ...(doc.omitManagedFields != null && {
      omitManagedFields: bool(doc.omitManagedFields, 'Policy.omitManagedFields'),
    }),
  };
}

/** `validation.ValidatePolicy`: the field errors, as apimachinery's `field.Error` prints them. */
export function validatePolicy(policy: AuditPolicy): string[] {
  const out: string[] = [];
  validateOmitStages(policy.omitStages, 'omitStages', out);
  policy.rules.forEach((rule, i) => {
    const p = `rules[${i}]`;
    const level = rule.level as string;
    if (level === '' || level === undefined) out.push(`${p}.level: Required value`);
    else if (!LEVELS.includes(rule.level))
      out.push(
        `${p}.level: Unsupported value: ${JSON.stringify(level)}: supported values: ${LEVELS.map((l) => JSON.stringify(l)).join(', ')}`,
      );
    (rule.nonResourceURLs ?? []).forEach((url, j) => {
      if (url === '*') return;
      if (!url.startsWith('/'))
        out.push(
          `${p}.nonResourceURLs[${j}]: Invalid value: ${JSON.stringify(url)}: non-resource URL rules must begin with a '/' character`,
        );
      if (url !== '' && url.slice(0, -1).includes('*'))
        out.push(
          `${p}.nonResourceURLs[${j}]: Invalid value: ${JSON.stringify(url)}: non-resource URL wildcards '*' must be the final character of the rule`,
        );
    });
    for (const g of rule.resources ?? []) {
      // kube's path names the list, not the entry.
      if (g.group) {
        const msgs = isDNS1123Subdomain(g.group);
        if (msgs.length > 0)
          out.push(`${p}.resources.group: Invalid value: ${JSON.stringify(g.group)}: ${msgs.join(',')}`);
      }
      if ((g.resourceNames ?? []).length > 0 && (g.resources ?? []).length === 0)
        out.push(
          `${p}.resources.resourceNames: Invalid value: ${goStrings(g.resourceNames!)}: using resourceNames requires at least one resource`,
        );
    }
    validateOmitStages(rule.omitStages, `${p}.omitStages`, out);
    if (
      (rule.nonResourceURLs ?? []).length > 0 &&
      ((rule.resources ?? []).length > 0 || (rule.namespaces ?? []).length > 0)
    )
      out.push(
        `${p}.nonResourceURLs: Invalid value: ${goStrings(rule.nonResourceURLs!)}: rules cannot apply to both regular resources and non-resource URLs`,
      );
  });
  return out;
}

function validateOmitStages(stages: readonly string[] | undefined, path: string, out: string[]): void {
  (stages ?? []).forEach((s, i) => {
    if (!STAGES.includes(s as AuditStage))
      out.push(`${path}[${i}]: Invalid value: ${JSON.stringify(s)}: allowed stages are ${STAGES.join(',')}`);
  });
}

/** `checker.go`'s `policyRuleEvaluator`: the first matching rule decides; none matching is `None`. */
export class PolicyEvaluator {
  private readonly rules: readonly (PolicyRule & { omit: readonly AuditStage[]; managed: boolean })[];
  private readonly fallback: RequestAuditConfig;

  constructor(readonly policy: AuditPolicy) {
    // Each rule omits the policy's stages too (`unionStages`).
    this.rules = policy.rules.map((r) => ({
      ...r,
      omit: [...new Set([...(policy.omitStages ?? []), ...(r.omitStages ?? [])])],
      managed: r.omitManagedFields ?? policy.omitManagedFields ?? false,
    }));
    this.fallback = {
      level: 'None',
      omitStages: policy.omitStages ?? [],
      omitManagedFields: policy.omitManagedFields ?? false,
    };
  }

  /** `EvaluatePolicyRule`. */
  evaluate(attrs: AuditAttributes): RequestAuditConfig {
    for (const rule of this.rules) {
      if (ruleMatches(rule, attrs))
        return { level: rule.level, omitStages: rule.omit, omitManagedFields: rule.managed };
    }
    return this.fallback;
  }
}

function ruleMatches(r: PolicyRule, attrs: AuditAttributes): boolean {
  const user = attrs.user;
  if (r.users?.length && (!user || !r.users.includes(user.username))) return false;
  if (r.userGroups?.length && !user?.groups.some((g) => r.userGroups!.includes(g))) return false;
  if (r.verbs?.length && !r.verbs.includes(attrs.verb)) return false;
  if (r.namespaces?.length || r.resources?.length) return resourceMatches(r, attrs);
  if (r.nonResourceURLs?.length)
    return !attrs.isResourceRequest && r.nonResourceURLs.some((spec) => pathMatches(attrs.path, spec));
  return true;
}

/** `ruleMatchesResource`: `resource/subresource`, `*`, `*\/subresource` and `resource/*` forms. */
function resourceMatches(r: PolicyRule, attrs: AuditAttributes): boolean {
  if (!attrs.isResourceRequest) return false;
  // Cluster-scoped resources have the namespace ''.
  if (r.namespaces?.length && !r.namespaces.includes(attrs.namespace)) return false;
  if (!r.resources?.length) return true;
  const { resource, subresource, name } = attrs;
  const combined = subresource ? `${resource}/${subresource}` : resource;
  for (const gr of r.resources) {
    if ((gr.group ?? '') !== attrs.apiGroup) continue;
    if (!gr.resources?.length) return true;
    if (gr.resourceNames?.length && !gr.resourceNames.includes(name)) continue;
    for (const res of gr.resources) {
      if (res === combined || res === '*') return true;
      if (subresource && res.startsWith('*/') && res.slice(2) === subresource) return true;
      if (res.endsWith('/*') && res.slice(0, -2) === resource) return true;
    }
  }
  return false;
}

/** `pathMatches`: `*`, the exact path, or a prefix ending in `*`. */
function pathMatches(path: string, spec: string): boolean {
  if (spec === '*' || spec === path) return true;
  return spec.endsWith('*') && path.startsWith(spec.replace(/\*+$/, ''));
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Go's `%#v` of a `[]string`. */
const goStrings = (values: readonly string[]): string =>
  `[]string{${values.map((v) => JSON.stringify(v)).join(', ')}}`;

/** encoding/json's type error, as the decoder reports it. */
function typeError(value: unknown, field: string, goType: string): Error {
  const jsType = Array.isArray(value)
    ? 'array'
    : value === null
      ? 'null'
      : typeof value === 'object'
        ? 'object'
        : typeof value;
  return new Error(
    `failed decoding: json: cannot unmarshal ${jsType} into Go struct field ${field} of type ${goType}`,
  );
}

function list(v: unknown, field: string, goType: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw typeError(v, field, goType);
  return v;
}

function str(v: unknown, field: string, goType = 'string'): string {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw typeError(v, field, goType);
  return v;
}

function strings(v: unknown, field: string): string[] {
  return list(v, field, '[]string').map((s) => str(s, field));
}

function bool(v: unknown, field: string): boolean {
  if (typeof v !== 'boolean') throw typeError(v, field, 'bool');
  return v;
}
