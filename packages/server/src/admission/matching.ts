/**
 * Which admission requests a webhook or a ValidatingAdmissionPolicy applies to, as
 * k8s.io/apiserver decides it: rules (`predicates/rules`), `matchPolicy: Equivalent` over the
 * resources that share a storage (`generic.Webhook.ShouldCallHook`, `policy/matching`), the
 * namespace selector against the namespace's labels (`predicates/namespace`) and the object
 * selector against the object or the old object (`predicates/object`).
 *
 * The functions are shared by the webhook dispatchers and the policy plugin: webhooks use
 * {@link matchWebhookRules} on their `rules`; policies use {@link matchPolicyResources} on their
 * `matchConstraints` (resourceRules with resourceNames, excludeResourceRules).
 */
import { ApiError } from 'kubeloop/api';
import type { Registry } from '../registry/registry.js';
import { labelSelectorAsSelector, selectorEmpty, selectorMatches } from '../registry/shared/util.js';
import { type ResourceType, storageOf } from '../registry/types.js';
import { objectKey, type Store } from '../storage/store.js';
import { isObject, type Obj } from '../util/object.js';
import type { AdmissionOptions } from './options.js';

/** A group/version/resource. */
export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

/** A group/version/kind. */
export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/** The request's user, as an AdmissionReview's `userInfo` carries it. */
export interface AdmissionUserInfo {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** What is known of one admission request (kube's `admission.Attributes`). */
export interface AdmissionAttributes {
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  /** The resource of the request (the URL's group/version/resource). */
  resource: GroupVersionResource;
  /** '' when none. */
  subresource: string;
  /** The kind of the request's object (a Scale for `/scale`). */
  kind: GroupVersionKind;
  /** The request's name ('' for a create with `generateName`). */
  name: string;
  /** '' when cluster-scoped; a Namespace's own name for a request on a Namespace. */
  namespace: string;
  object?: Obj;
  oldObject?: Obj;
  userInfo: AdmissionUserInfo;
  dryRun: boolean;
  /** CreateOptions/UpdateOptions/DeleteOptions as kube sends them. */
  options?: Obj;
}

/** A webhook rule (`RuleWithOperations`). */
export interface RuleWithOperations {
  operations?: string[];
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  /** `*` (default), `Cluster` or `Namespaced`. */
  scope?: string;
}

/** A policy's rule (`NamedRuleWithOperations`): a webhook rule limited to some names. */
export interface NamedRuleWithOperations extends RuleWithOperations {
  resourceNames?: string[];
}

/**
 * The matching part of a webhook or of a policy's `matchConstraints`: webhooks have `rules`,
 * policies `resourceRules`/`excludeResourceRules`.
 */
export interface MatchResources {
  namespaceSelector?: Obj;
  objectSelector?: Obj;
  matchPolicy?: 'Exact' | 'Equivalent' | string;
  rules?: RuleWithOperations[];
  resourceRules?: NamedRuleWithOperations[];
  excludeResourceRules?: NamedRuleWithOperations[];
}

/** How a request matched: the resource and kind it is sent as (an equivalent one under `Equivalent`). */
export interface RuleMatch {
  resource: GroupVersionResource;
  subresource: string;
  kind: GroupVersionKind;
}

/**
 * Kube's `EquivalentResourceMapper`: the resources served by the same storage (a custom
 * resource's other versions, a built-in kind in other groups or versions) and their kinds.
 */
export interface EquivalentResources {
  /** Every resource the same storage serves, `resource` included (not to be changed: it may be shared). */
  equivalents(resource: GroupVersionResource, subresource: string): readonly GroupVersionResource[];
  /** The kind of `resource` (with `subresource`), undefined when unknown. */
  kindFor(resource: GroupVersionResource, subresource: string): GroupVersionKind | undefined;
}

/** The equivalent resources of the server's registry: types sharing one storage. */
export function registryEquivalents(registry: Registry): EquivalentResources {
  let generation = -1;
  let byStorage = new Map<string, ResourceType[]>();
  // The answers per type and subresource, until the registry changes: webhooks and policies
  // with `matchPolicy: Equivalent` ask on every request their rules do not match as it is.
  let answers = new WeakMap<ResourceType, Map<string, readonly GroupVersionResource[]>>();
  const index = (): Map<string, ResourceType[]> => {
    if (generation !== registry.generation) {
      generation = registry.generation;
      answers = new WeakMap();
      byStorage = new Map();
      for (const t of registry.all()) {
        if (t.virtual) continue;
        const { group, resource } = storageOf(t);
        const key = `${group}/${resource}`;
        const list = byStorage.get(key) ?? [];
        list.push(t);
        byStorage.set(key, list);
      }
    }
    return byStorage;
  };
  return {
    equivalents(r, subresource) {
      const t = registry.lookup(r.group, r.version, r.resource);
      if (!t) return [r];
      const byType = index();
      let bySub = answers.get(t);
      const known = bySub?.get(subresource);
      if (known) return known;
      const { group, resource } = storageOf(t);
      const out = (byType.get(`${group}/${resource}`) ?? [t])
        .filter((e) => subresource === '' || hasSubresource(e, subresource))
        .map((e) => Object.freeze({ group: e.group, version: e.version, resource: e.resource }));
      const answer = Object.freeze(out.length > 0 ? out : [r]);
      if (!bySub) {
        bySub = new Map();
        answers.set(t, bySub);
      }
      bySub.set(subresource, answer);
      return answer;
    },
    kindFor(r, subresource) {
      const t = registry.lookup(r.group, r.version, r.resource);
      if (!t) return undefined;
      if (subresource === 'scale') return { group: 'autoscaling', version: 'v1', kind: 'Scale' };
      return { group: t.group, version: t.version, kind: t.kind };
    },
  };
}

function hasSubresource(t: ResourceType, subresource: string): boolean {
  const s = t.subresources as Record<string, unknown>;
  return s[subresource] !== undefined && s[subresource] !== false;
}

const NAMESPACES = { group: '', version: 'v1', resource: 'namespaces' };

const sameResource = (a: GroupVersionResource, b: GroupVersionResource): boolean =>
  a.group === b.group && a.version === b.version && a.resource === b.resource;

/** Whether `items` has `*` or `requested` (a loop: every policy and webhook asks this per request). */
function exactOrWildcard(items: readonly string[] | undefined, requested: string): boolean {
  if (!items) return false;
  for (let i = 0; i < items.length; i++) if (items[i] === '*' || items[i] === requested) return true;
  return false;
}

/**
 * One rule against a request (`rules.Matcher.Matches`), with `resource` in place of the
 * request's resource (an equivalent one).
 */
export function ruleMatches(
  rule: RuleWithOperations,
  attrs: AdmissionAttributes,
  resource: GroupVersionResource = attrs.resource,
): boolean {
  const scope = rule.scope ?? '*';
  if (scope === 'Namespaced' && (sameResource(resource, NAMESPACES) || attrs.namespace === '')) return false;
  if (scope === 'Cluster' && !(sameResource(resource, NAMESPACES) || attrs.namespace === '')) return false;
  if (scope !== '*' && scope !== 'Namespaced' && scope !== 'Cluster') return false;
  if (!exactOrWildcard(rule.operations, attrs.operation)) return false;
  if (!exactOrWildcard(rule.apiGroups, resource.group)) return false;
  if (!exactOrWildcard(rule.apiVersions, resource.version)) return false;
  for (const r of rule.resources ?? []) {
    const slash = r.indexOf('/');
    const res = slash < 0 ? r : r.slice(0, slash);
    const sub = slash < 0 ? '' : r.slice(slash + 1);
    if ((res === '*' || res === resource.resource) && (sub === '*' || sub === attrs.subresource)) return true;
  }
  return false;
}

/**
 * A webhook's rules and matchPolicy (`ShouldCallHook`): the request as it is, else (under
 * `Equivalent`) the first rule, in order, that an equivalent resource matches. Undefined when
 * no rule matches. Throws a 500 when an equivalent resource has no known kind.
 */
export function matchWebhookRules(
  rules: readonly RuleWithOperations[] | undefined,
  matchPolicy: string | undefined,
  attrs: AdmissionAttributes,
  equivalents: EquivalentResources,
): RuleMatch | undefined {
  const list = rules ?? [];
  if (list.some((r) => ruleMatches(r, attrs))) {
    return { resource: attrs.resource, subresource: attrs.subresource, kind: attrs.kind };
  }
  if (matchPolicy !== 'Equivalent') return undefined;
  return equivalentMatch(list, attrs, equivalents);
}

function equivalentMatch(
  rules: readonly RuleWithOperations[],
  attrs: AdmissionAttributes,
  equivalents: EquivalentResources,
): RuleMatch | undefined {
  if (rules.length === 0) return undefined;
  const others = equivalents
    .equivalents(attrs.resource, attrs.subresource)
    .filter((e) => !sameResource(e, attrs.resource));
  if (others.length === 0) return undefined;
  // Earlier rules first, as kube honours them.
  for (const rule of rules) {
    for (const e of others) {
      if (!ruleMatches(rule, attrs, e)) continue;
      const kind = equivalents.kindFor(e, attrs.subresource);
      if (!kind) {
        throw ApiError.internal(
          `unable to convert to ${e.group}/${e.version}, Resource=${e.resource}: unknown kind`,
        );
      }
      return { resource: e, subresource: attrs.subresource, kind };
    }
  }
  return undefined;
}

/**
 * A policy's `matchConstraints` rules (`policy/matching.Matcher.Matches` without the selectors):
 * excluded by `excludeResourceRules`, else matched by `resourceRules` (all when empty) with their
 * `resourceNames`, or under `Equivalent` by an equivalent resource (names not checked there, as
 * in kube).
 */
export function matchPolicyResources(
  match: MatchResources,
  attrs: AdmissionAttributes,
  equivalents: EquivalentResources,
): RuleMatch | undefined {
  if (matchNamedRules(match.excludeResourceRules ?? [], match.matchPolicy, attrs, equivalents))
    return undefined;
  if ((match.resourceRules ?? []).length === 0) {
    return { resource: attrs.resource, subresource: attrs.subresource, kind: attrs.kind };
  }
  return matchNamedRules(match.resourceRules ?? [], match.matchPolicy, attrs, equivalents);
}

function matchNamedRules(
  rules: readonly NamedRuleWithOperations[],
  matchPolicy: string | undefined,
  attrs: AdmissionAttributes,
  equivalents: EquivalentResources,
): RuleMatch | undefined {
  for (const rule of rules) {
    if (!ruleMatches(rule, attrs)) continue;
    const names = rule.resourceNames ?? [];
    if (names.length === 0 || names.includes(attrs.name)) {
      return { resource: attrs.resource, subresource: attrs.subresource, kind: attrs.kind };
    }
  }
  if (matchPolicy === undefined || matchPolicy === 'Exact') return undefined;
  return equivalentMatch(rules, attrs, equivalents);
}

/** A parsed label selector; undefined selects everything. Throws a 500 for an invalid one. */
function parseSelector(selector: Obj | undefined): ReturnType<typeof labelSelectorAsSelector> {
  if (selector === undefined || selector === null) return undefined;
  // Stored configurations are frozen: a selector object is parsed once, not per request.
  const cached = parsedSelectors.get(selector);
  if (cached) return cached.parsed;
  const parsed = labelSelectorAsSelector(selector);
  if (!parsed) throw ApiError.internal('invalid label selector');
  const out = selectorEmpty(parsed) ? undefined : parsed;
  if (Object.isFrozen(selector)) parsedSelectors.set(selector, { parsed: out });
  return out;
}

const parsedSelectors = new WeakMap<Obj, { parsed: ReturnType<typeof labelSelectorAsSelector> }>();

const labelsOf = (obj: Obj | undefined): Record<string, string> => {
  const m = obj && isObject(obj.metadata) ? obj.metadata : undefined;
  return m && isObject(m.labels) ? (m.labels as Record<string, string>) : {};
};

/**
 * Whether the request's namespace has labels `selector` selects (`MatchNamespaceSelector`): a
 * cluster-scoped request other than a Namespace always matches; a Namespace being created or
 * updated is judged by its new labels; otherwise the namespace is read from the store, and a
 * missing one fails the request with its 404 (`namespaces "x" not found`), as kube does.
 */
export function matchesNamespaceSelector(
  selector: Obj | undefined,
  attrs: AdmissionAttributes,
  store: Store,
): boolean {
  if (attrs.namespace === '' && attrs.resource.resource !== 'namespaces') return true;
  const parsed = parseSelector(selector);
  if (!parsed) return true;
  return selectorMatches(parsed, namespaceLabels(attrs, store));
}

/** The labels of the request's namespace (the Namespace object's own for a write to a Namespace). */
export function namespaceLabels(attrs: AdmissionAttributes, store: Store): Record<string, string> {
  if (
    attrs.resource.resource === 'namespaces' &&
    attrs.resource.group === '' &&
    attrs.subresource === '' &&
    (attrs.operation === 'CREATE' || attrs.operation === 'UPDATE')
  ) {
    return labelsOf(attrs.object);
  }
  const ns = namespaceObject(attrs.namespace, store);
  if (!ns) throw ApiError.notFound({ group: '', resource: 'namespaces' }, attrs.namespace);
  return labelsOf(ns);
}

/** The Namespace object named `name`, if any (policies' `namespaceObject`). */
export function namespaceObject(name: string, store: Store): Obj | undefined {
  if (name === '') return undefined;
  return store.get(objectKey('', 'namespaces', undefined, name))?.object as Obj | undefined;
}

/** Whether the object or the old object has labels `selector` selects (`MatchObjectSelector`). */
export function matchesObjectSelector(selector: Obj | undefined, attrs: AdmissionAttributes): boolean {
  const parsed = parseSelector(selector);
  if (!parsed) return true;
  const matches = (o: Obj | undefined) =>
    o !== undefined && isObject(o) && selectorMatches(parsed, labelsOf(o));
  return matches(attrs.object) || matches(attrs.oldObject);
}

/**
 * Requests on the admission configuration kinds themselves, which no webhook or policy sees
 * (`rules.IsExemptAdmissionConfigurationResource`), so that a broken webhook cannot lock out
 * its own repair.
 */
export function isExemptAdmissionConfigurationResource(attrs: AdmissionAttributes): boolean {
  return (
    attrs.kind.group === 'admissionregistration.k8s.io' && ADMISSION_CONFIGURATION_KINDS.has(attrs.kind.kind)
  );
}

const ADMISSION_CONFIGURATION_KINDS: ReadonlySet<string> = new Set([
  'ValidatingWebhookConfiguration',
  'MutatingWebhookConfiguration',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
  'MutatingAdmissionPolicy',
  'MutatingAdmissionPolicyBinding',
]);

/**
 * The attributes of one request, from what the registry passes to admission plugins. `object`
 * and `oldObject` are the plugin's (a DELETE has the stored object as `oldObject` only).
 */
export function admissionAttributes(
  op: AdmissionAttributes['operation'],
  t: ResourceType,
  obj: Obj | undefined,
  old: Obj | undefined,
  options: AdmissionOptions | undefined,
): AdmissionAttributes {
  const subresource = options?.subresource ?? '';
  const m = obj && isObject(obj.metadata) ? obj.metadata : old && isObject(old.metadata) ? old.metadata : {};
  const name = options?.name ?? (typeof m.name === 'string' ? m.name : '');
  // A request on a Namespace has the Namespace's name as its namespace, except its create
  // (kube's RequestInfo reads it from the URL, which names none then).
  const namespace =
    t.group === '' && t.resource === 'namespaces'
      ? op === 'CREATE'
        ? ''
        : name
      : t.namespaced
        ? options?.namespace || (typeof m.namespace === 'string' ? m.namespace : '')
        : '';
  const user = options?.user;
  // Fields set one by one, in the order the spreads put them before: every admitted write
  // makes this object, and a spread copies generically.
  const attrs: AdmissionAttributes = {
    operation: op,
    resource: { group: t.group, version: t.version, resource: t.resource },
    subresource,
    kind:
      options?.kind ??
      (subresource === 'scale'
        ? { group: 'autoscaling', version: 'v1', kind: 'Scale' }
        : { group: t.group, version: t.version, kind: t.kind }),
    name,
    namespace,
  } as AdmissionAttributes;
  if (op !== 'DELETE' && obj !== undefined) attrs.object = obj;
  if (old !== undefined) attrs.oldObject = old;
  if (user) {
    const userInfo: AdmissionUserInfo = { username: user.username };
    if (user.uid !== undefined) userInfo.uid = user.uid;
    userInfo.groups = [...user.groups];
    if (user.extra !== undefined) userInfo.extra = user.extra;
    attrs.userInfo = userInfo;
  } else attrs.userInfo = { username: '' };
  attrs.dryRun = options?.dryRun === true;
  if (options?.operationOptions !== undefined) attrs.options = options.operationOptions;
  return attrs;
}
