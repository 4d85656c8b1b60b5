/**
 * RBAC's PolicyRule arithmetic, as Kubernetes evaluates it: whether a rule allows a request
 * (`rbacv1helpers.*Matches`, plugin/pkg/auth/authorizer/rbac `RuleAllows`), whether rules cover
 * others (component-helpers `validation.Covers`, used by escalation prevention), and the compact
 * text of a rule in escalation messages (`CompactString`, `CompactRules`).
 */
import type { AuthorizationAttributes } from '../types.js';

/** An `rbac/v1` PolicyRule, its lists absent when empty. */
export interface PolicyRule {
  verbs: readonly string[];
  apiGroups?: readonly string[];
  resources?: readonly string[];
  resourceNames?: readonly string[];
  nonResourceURLs?: readonly string[];
}

const has = (set: readonly string[] | undefined, v: string): boolean => set?.includes(v) ?? false;
const hasAll = (set: readonly string[] | undefined, vs: readonly string[] | undefined): boolean =>
  (vs ?? []).every((v) => has(set, v));

/** A stored rule (any JSON) as a {@link PolicyRule}: absent or malformed lists are empty. */
export function policyRule(raw: unknown): PolicyRule {
  const r = (typeof raw === 'object' && raw !== null ? raw : {}) as Record<string, unknown>;
  const list = (v: unknown): string[] | undefined =>
    Array.isArray(v) && v.length > 0 ? v.map(String) : undefined;
  const out: PolicyRule = { verbs: list(r.verbs) ?? [] };
  const apiGroups = list(r.apiGroups);
  const resources = list(r.resources);
  const resourceNames = list(r.resourceNames);
  const nonResourceURLs = list(r.nonResourceURLs);
  if (apiGroups) out.apiGroups = apiGroups;
  if (resources) out.resources = resources;
  if (resourceNames) out.resourceNames = resourceNames;
  if (nonResourceURLs) out.nonResourceURLs = nonResourceURLs;
  return out;
}

function resourceMatches(rule: PolicyRule, combined: string, subresource: string): boolean {
  for (const r of rule.resources ?? []) {
    if (r === '*' || r === combined) return true;
    // `*/<subresource>` names a subresource of every resource; `<resource>/*` is no wildcard in kube.
    if (subresource && r.length === subresource.length + 2 && r.startsWith('*/') && r.endsWith(subresource))
      return true;
  }
  return false;
}

function nonResourceURLMatches(ruleURL: string, path: string): boolean {
  if (ruleURL === '*' || ruleURL === path) return true;
  return ruleURL.endsWith('*') && path.startsWith(ruleURL.replace(/\*+$/, ''));
}

/** `RuleAllows`: whether `rule` allows the request `a` describes. */
export function ruleAllows(a: AuthorizationAttributes, rule: PolicyRule): boolean {
  const verb = a.resource ? (a.resource.verb ?? '') : (a.nonResource?.verb ?? '');
  if (!rule.verbs.some((v) => v === '*' || v === verb)) return false;
  if (a.resource) {
    const { group = '', resource = '', subresource = '', name = '' } = a.resource;
    const combined = subresource ? `${resource}/${subresource}` : resource;
    return (
      (rule.apiGroups ?? []).some((g) => g === '*' || g === group) &&
      resourceMatches(rule, combined, subresource) &&
      (!rule.resourceNames || rule.resourceNames.includes(name))
    );
  }
  const path = a.nonResource?.path ?? '';
  return (rule.nonResourceURLs ?? []).some((u) => nonResourceURLMatches(u, path));
}

/** `BreakdownRule`: one rule per group × resource × verb (× resource name), then URL × verb. */
function breakdown(rule: PolicyRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  for (const group of rule.apiGroups ?? [])
    for (const resource of rule.resources ?? [])
      for (const verb of rule.verbs) {
        if (rule.resourceNames)
          for (const n of rule.resourceNames)
            out.push({ apiGroups: [group], resources: [resource], verbs: [verb], resourceNames: [n] });
        else out.push({ apiGroups: [group], resources: [resource], verbs: [verb] });
      }
  for (const url of rule.nonResourceURLs ?? [])
    for (const verb of rule.verbs) out.push({ nonResourceURLs: [url], verbs: [verb] });
  return out;
}

function resourceCoversAll(
  set: readonly string[] | undefined,
  covers: readonly string[] | undefined,
): boolean {
  if (has(set, '*') || hasAll(set, covers)) return true;
  for (const path of covers ?? []) {
    if (has(set, path)) continue;
    const slash = path.indexOf('/');
    if (slash < 0) return false;
    if (!has(set, `*/${path.slice(slash + 1)}`)) return false;
  }
  return true;
}

function ruleCovers(owner: PolicyRule, sub: PolicyRule): boolean {
  const verbs = has(owner.verbs, '*') || hasAll(owner.verbs, sub.verbs);
  const groups = has(owner.apiGroups, '*') || hasAll(owner.apiGroups, sub.apiGroups);
  const resources = resourceCoversAll(owner.resources, sub.resources);
  const urls = (sub.nonResourceURLs ?? []).every((p) =>
    (owner.nonResourceURLs ?? []).some(
      (o) => o === p || (o.endsWith('*') && p.startsWith(o.replace(/\*+$/, ''))),
    ),
  );
  const names = sub.resourceNames
    ? !owner.resourceNames || hasAll(owner.resourceNames, sub.resourceNames)
    : !owner.resourceNames;
  return verbs && groups && resources && names && urls;
}

/** `validation.Covers`: whether `owner` rules cover every rule of `servant`, and the atomic rules they miss. */
export function covers(
  owner: readonly PolicyRule[],
  servant: readonly PolicyRule[],
): { covered: boolean; missing: PolicyRule[] } {
  const missing = servant.flatMap(breakdown).filter((sub) => !owner.some((o) => ruleCovers(o, sub)));
  return { covered: missing.length === 0, missing };
}

/**
 * `CompactRules`: rules of one group and one resource (and at most one name) that differ only in
 * their verbs become one rule; others are kept as they are.
 */
export function compactRules(rules: readonly PolicyRule[]): PolicyRule[] {
  const out: PolicyRule[] = [];
  const simple = new Map<string, PolicyRule & { verbs: string[] }>();
  for (const r of rules) {
    const isSimple =
      (r.resourceNames?.length ?? 0) <= 1 &&
      !r.nonResourceURLs &&
      r.apiGroups?.length === 1 &&
      r.resources?.length === 1;
    if (!isSimple) {
      out.push(r);
      continue;
    }
    const key = JSON.stringify([r.apiGroups, r.resources, r.resourceNames ?? null]);
    const known = simple.get(key);
    if (known) known.verbs.push(...r.verbs);
    else simple.set(key, { ...r, verbs: [...r.verbs] });
  }
  return [...out, ...simple.values()];
}

/** Go's `%q` of a []string: `["a" "b"]`. */
export const goQuotedList = (vs: readonly string[]): string =>
  `[${vs.map((v) => JSON.stringify(v)).join(' ')}]`;

/** `CompactString`: `{APIGroups:[""], Resources:["pods"], Verbs:["get"]}`. */
export function compactString(r: PolicyRule): string {
  const parts: string[] = [];
  if (r.apiGroups?.length) parts.push(`APIGroups:${goQuotedList(r.apiGroups)}`);
  if (r.resources?.length) parts.push(`Resources:${goQuotedList(r.resources)}`);
  if (r.nonResourceURLs?.length) parts.push(`NonResourceURLs:${goQuotedList(r.nonResourceURLs)}`);
  if (r.resourceNames?.length) parts.push(`ResourceNames:${goQuotedList(r.resourceNames)}`);
  if (r.verbs.length) parts.push(`Verbs:${goQuotedList(r.verbs)}`);
  return `{${parts.join(', ')}}`;
}
