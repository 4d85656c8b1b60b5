/**
 * Whether one set of policy rules grants everything another does, as kube's
 * `pkg/apis/rbac/v1` `validation.Covers` decides it: the servant rules are broken down into one
 * rule per (group, resource, verb[, name]) or (URL, verb), and each must be covered by an owner
 * rule. The reconcile adds the uncovered pieces, so they keep that broken-down shape.
 */
import type { PolicyRule, Subject } from './rules.js';

/** A rule as stored: any of its lists may be missing. */
export type StoredRule = Partial<PolicyRule>;

const has = (set: readonly string[], v: string): boolean => set.includes(v);
const hasAll = (set: readonly string[], vs: readonly string[]): boolean => vs.every((v) => set.includes(v));

/** `BreakdownRule`: one rule per group × resource × verb (× name), then per URL × verb. */
export function breakdownRule(rule: StoredRule): PolicyRule[] {
  const out: PolicyRule[] = [];
  const verbs = rule.verbs ?? [];
  for (const g of rule.apiGroups ?? [])
    for (const res of rule.resources ?? [])
      for (const verb of verbs) {
        const names = rule.resourceNames ?? [];
        if (names.length > 0)
          for (const n of names)
            out.push({ verbs: [verb], apiGroups: [g], resources: [res], resourceNames: [n] });
        else out.push({ verbs: [verb], apiGroups: [g], resources: [res] });
      }
  for (const url of rule.nonResourceURLs ?? [])
    for (const verb of verbs) out.push({ verbs: [verb], nonResourceURLs: [url] });
  return out;
}

/** `resourceCoversAll`: `*`, the exact resource, or `*\/<subresource>` for a subresource. */
function resourcesCover(owner: readonly string[], wanted: readonly string[]): boolean {
  if (has(owner, '*') || hasAll(owner, wanted)) return true;
  return wanted.every((path) => {
    if (has(owner, path)) return true;
    const slash = path.indexOf('/');
    return slash >= 0 && has(owner, `*/${path.slice(slash + 1)}`);
  });
}

/** `nonResourceURLCovers`: the same path, or a prefix ending in `*`. */
function urlCovers(owner: string, path: string): boolean {
  return owner === path || (owner.endsWith('*') && path.startsWith(owner.replace(/\*+$/, '')));
}

/** `ruleCovers`. */
function ruleCovers(owner: StoredRule, sub: StoredRule): boolean {
  const ownerVerbs = owner.verbs ?? [];
  const ownerGroups = owner.apiGroups ?? [];
  const ownerNames = owner.resourceNames ?? [];
  const subNames = sub.resourceNames ?? [];
  const verbs = has(ownerVerbs, '*') || hasAll(ownerVerbs, sub.verbs ?? []);
  const groups = has(ownerGroups, '*') || hasAll(ownerGroups, sub.apiGroups ?? []);
  const resources = resourcesCover(owner.resources ?? [], sub.resources ?? []);
  const urls = (sub.nonResourceURLs ?? []).every((p) =>
    (owner.nonResourceURLs ?? []).some((o) => urlCovers(o, p)),
  );
  const names =
    subNames.length === 0 ? ownerNames.length === 0 : ownerNames.length === 0 || hasAll(ownerNames, subNames);
  return verbs && groups && resources && names && urls;
}

/** `Covers`: the broken-down servant rules no owner rule covers (none: the owner covers all). */
export function uncoveredRules(owner: readonly StoredRule[], servant: readonly StoredRule[]): PolicyRule[] {
  return servant.flatMap(breakdownRule).filter((sub) => !owner.some((o) => ruleCovers(o, sub)));
}

const sameSubject = (a: Subject, b: Subject): boolean =>
  a.kind === b.kind &&
  (a.apiGroup ?? '') === (b.apiGroup ?? '') &&
  a.name === b.name &&
  (a.namespace ?? '') === (b.namespace ?? '');

/** `diffSubjectLists`: the subjects only in `a`, each once. */
export function subjectsMissing(a: readonly Subject[], b: readonly Subject[]): Subject[] {
  const out: Subject[] = [];
  for (const s of a)
    if (!b.some((x) => sameSubject(x, s)) && !out.some((x) => sameSubject(x, s))) out.push(s);
  return out;
}
