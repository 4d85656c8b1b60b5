/**
 * RBAC's rule resolver over the server's own storage (pkg/registry/rbac/validation `DefaultRuleResolver`):
 * the rules a user holds in a namespace, from the Roles and ClusterRoles that RoleBindings and
 * ClusterRoleBindings grant to the user, its groups or its service account.
 *
 * Roles are read from the store as they are at the moment of the request. Bindings are indexed
 * by subject, the index kept in step with every write by a watch of the store: a new binding is
 * effective on the very next request (the store publishes a write before acknowledging it), and
 * a request looks only at the bindings of its user and groups instead of listing them all.
 */
import type { Store } from '../../../storage/store.js';
import type { StoredObject, StoreEvent } from '../../../storage/types.js';
import { type PolicyRule, policyRule } from './rules.js';

const GROUP = 'rbac.authorization.k8s.io';
const CRB_PREFIX = `/${GROUP}/clusterrolebindings/`;
const RB_PREFIX = `/${GROUP}/rolebindings/`;

/** A binding's subject (`rbac/v1` Subject). */
interface Subject {
  kind: string;
  name: string;
  namespace: string;
}

/** What the resolver keeps of a RoleBinding or ClusterRoleBinding. */
interface Binding {
  key: string;
  name: string;
  /** Empty for a ClusterRoleBinding. */
  namespace: string;
  roleRef: { kind: string; name: string; apiGroup: string };
  subjects: Subject[];
  /** The index entries of its subjects (`u:<user>`, `g:<group>`). */
  indexKeys: string[];
  /** The rule source naming each subject, made once when first needed. */
  sources: Map<Subject, string>;
}

/** The role reference of a binding, as `GetRoleReferenceRules` takes it. */
export interface RoleRef {
  kind: string;
  name: string;
  apiGroup?: string;
}

/** Where a rule came from: `ClusterRoleBinding "b" of ClusterRole "r" to User "alice"`. */
export type RuleSource = () => string;

/** A visitor of {@link RbacPolicy.visitRulesFor}: false stops the walk. */
export type RuleVisitor = (
  source: RuleSource | undefined,
  rule: PolicyRule | undefined,
  err: string | undefined,
) => boolean;

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const isObj = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** `serviceaccount.MakeUsername`. */
const saUsername = (namespace: string, name: string): string => `system:serviceaccount:${namespace}:${name}`;

function bindingOf(stored: StoredObject): Binding {
  const obj = stored.object as Record<string, unknown>;
  const meta = isObj(obj.metadata) ? obj.metadata : {};
  const namespace = str(meta.namespace);
  const roleRef = isObj(obj.roleRef) ? obj.roleRef : {};
  const subjects: Subject[] = (Array.isArray(obj.subjects) ? obj.subjects : [])
    .filter(isObj)
    .map((s) => ({ kind: str(s.kind), name: str(s.name), namespace: str(s.namespace) }));
  const indexKeys = new Set<string>();
  for (const s of subjects) {
    if (s.kind === 'User') indexKeys.add(`u:${s.name}`);
    else if (s.kind === 'Group') indexKeys.add(`g:${s.name}`);
    else if (s.kind === 'ServiceAccount') {
      const ns = s.namespace || namespace;
      if (ns) indexKeys.add(`u:${saUsername(ns, s.name)}`);
    }
  }
  return {
    key: stored.key,
    name: str(meta.name),
    namespace,
    roleRef: { kind: str(roleRef.kind), name: str(roleRef.name), apiGroup: str(roleRef.apiGroup) },
    subjects,
    indexKeys: [...indexKeys],
    sources: new Map(),
  };
}

/** `appliesToUser`, for the first subject that applies (the one the rule's source names). */
function applyingSubject(b: Binding, user: string, groups: readonly string[]): Subject | undefined {
  return b.subjects.find((s) => {
    if (s.kind === 'User') return s.name === user;
    if (s.kind === 'Group') return groups.includes(s.name);
    if (s.kind === 'ServiceAccount') {
      const ns = s.namespace || b.namespace;
      return ns !== '' && saUsername(ns, s.name) === user;
    }
    return false;
  });
}

/** `describeSubject`. */
function describeSubject(s: Subject, bindingNamespace: string): string {
  if (s.kind === 'ServiceAccount')
    return `${s.kind} ${JSON.stringify(`${s.name}/${s.namespace || bindingNamespace}`)}`;
  return `${s.kind} ${JSON.stringify(s.name)}`;
}

/** `clusterRoleBindingDescriber`/`roleBindingDescriber`: where a rule comes from, made once per binding and subject. */
function sourceOf(b: Binding, subject: Subject): string {
  const known = b.sources.get(subject);
  if (known !== undefined) return known;
  const role = `${b.roleRef.kind} ${JSON.stringify(b.roleRef.name)}`;
  const text = b.namespace
    ? `RoleBinding ${JSON.stringify(`${b.name}/${b.namespace}`)} of ${role} to ${describeSubject(subject, b.namespace)}`
    : `ClusterRoleBinding ${JSON.stringify(b.name)} of ${role} to ${describeSubject(subject, '')}`;
  b.sources.set(subject, text);
  return text;
}

/** The bindings of one scope (cluster, or one namespace), indexed by subject. */
class BindingIndex {
  readonly bySubject = new Map<string, Set<Binding>>();
  size = 0;

  add(b: Binding): void {
    this.size++;
    for (const k of b.indexKeys) {
      const set = this.bySubject.get(k);
      if (set) set.add(b);
      else this.bySubject.set(k, new Set([b]));
    }
  }

  remove(b: Binding): void {
    this.size--;
    for (const k of b.indexKeys) {
      const set = this.bySubject.get(k);
      set?.delete(b);
      if (set?.size === 0) this.bySubject.delete(k);
    }
  }

  /** The bindings naming `user` or one of `groups`, in key order (the order of a list). */
  candidates(user: string, groups: readonly string[]): Binding[] {
    if (this.size === 0) return [];
    let out: Set<Binding> | undefined;
    const add = (set: Set<Binding> | undefined) => {
      if (!set) return;
      out ??= new Set();
      for (const b of set) out.add(b);
    };
    add(this.bySubject.get(`u:${user}`));
    for (const g of groups) add(this.bySubject.get(`g:${g}`));
    if (!out) return [];
    const list = [...out];
    if (list.length > 1) list.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    return list;
  }
}

/**
 * The RBAC policy stored in one server: its rule resolver, kept in step with the store.
 * `closed()` stops following the store.
 */
export class RbacPolicy {
  private readonly cluster = new BindingIndex();
  private readonly namespaces = new Map<string, BindingIndex>();
  private readonly byKey = new Map<string, Binding>();
  private readonly rulesOf = new WeakMap<StoredObject, PolicyRule[]>();
  private readonly unwatch: (() => void)[] = [];

  constructor(private readonly store: Pick<Store, 'get' | 'list' | 'watch' | 'revision'>) {
    for (const prefix of [CRB_PREFIX, RB_PREFIX]) {
      const { items, revision } = store.list(prefix);
      for (const item of items) this.put(item);
      this.unwatch.push(store.watch(prefix, revision, (ev) => this.apply(ev)));
    }
  }

  /** Stops following the store. */
  close(): void {
    for (const u of this.unwatch.splice(0)) u();
  }

  private apply(ev: StoreEvent): void {
    this.drop(ev.key);
    if (ev.type !== 'DELETED') this.put(ev.object);
  }

  private scope(namespace: string): BindingIndex {
    if (!namespace) return this.cluster;
    const known = this.namespaces.get(namespace);
    if (known) return known;
    const idx = new BindingIndex();
    this.namespaces.set(namespace, idx);
    return idx;
  }

  private put(stored: StoredObject): void {
    const b = bindingOf(stored);
    this.byKey.set(b.key, b);
    this.scope(b.namespace).add(b);
  }

  private drop(key: string): void {
    const b = this.byKey.get(key);
    if (!b) return;
    this.byKey.delete(key);
    const idx = this.scope(b.namespace);
    idx.remove(b);
    if (b.namespace && idx.size === 0) this.namespaces.delete(b.namespace);
  }

  /**
   * `GetRoleReferenceRules`: the rules of the Role (in `namespace`) or ClusterRole a binding
   * refers to, or the error kube gives. `registryNames`: the not-found error as the registry
   * words it (`roles.rbac…`, what escalation checks answer) instead of the authorizer's listers
   * (`role.rbac…`).
   */
  roleReferenceRules(
    ref: RoleRef,
    namespace: string,
    registryNames = false,
  ): { rules: PolicyRule[] } | { error: string } {
    const resource = ref.kind === 'Role' ? 'roles' : ref.kind === 'ClusterRole' ? 'clusterroles' : undefined;
    if (!resource) return { error: `unsupported role reference kind: ${JSON.stringify(ref.kind)}` };
    const key =
      resource === 'roles'
        ? `/${GROUP}/roles/${namespace}/${ref.name}`
        : `/${GROUP}/clusterroles/${ref.name}`;
    const stored = resource === 'roles' && !namespace ? undefined : this.store.get(key);
    if (!stored) {
      const what = registryNames ? resource : resource.slice(0, -1);
      return { error: `${what}.${GROUP} ${JSON.stringify(ref.name)} not found` };
    }
    let rules = this.rulesOf.get(stored);
    if (!rules) {
      const raw = (stored.object as Record<string, unknown>).rules;
      rules = (Array.isArray(raw) ? raw : []).map(policyRule);
      this.rulesOf.set(stored, rules);
    }
    return { rules };
  }

  /**
   * `VisitRulesFor`: every rule that applies to `user` (with `groups`) in `namespace` — the
   * ClusterRoleBindings' first, then the namespace's RoleBindings' — and every error met
   * resolving them; the visitor returns false to stop.
   */
  visitRulesFor(
    user: string,
    groups: readonly string[],
    namespace: string,
    visit: RuleVisitor,
    registryNames = false,
  ): void {
    const scopes: BindingIndex[] = [this.cluster];
    const local = namespace ? this.namespaces.get(namespace) : undefined;
    if (local) scopes.push(local);
    for (const idx of scopes) {
      for (const b of idx.candidates(user, groups)) {
        const subject = applyingSubject(b, user, groups);
        if (!subject) continue;
        const resolved = this.roleReferenceRules(b.roleRef, b.namespace, registryNames);
        if ('error' in resolved) {
          if (!visit(undefined, undefined, resolved.error)) return;
          continue;
        }
        const source: RuleSource = () => sourceOf(b, subject);
        for (const rule of resolved.rules) if (!visit(source, rule, undefined)) return;
      }
    }
  }

  /** `RulesFor`: the rules `user` holds in `namespace`, and the errors met resolving them. */
  rulesFor(
    user: string,
    groups: readonly string[],
    namespace: string,
    registryNames = false,
  ): { rules: PolicyRule[]; errors: string[] } {
    const rules: PolicyRule[] = [];
    const errors: string[] = [];
    this.visitRulesFor(
      user,
      groups,
      namespace,
      (_s, rule, err) => {
        if (rule) rules.push(rule);
        if (err) errors.push(err);
        return true;
      },
      registryNames,
    );
    return { rules, errors };
  }
}

/** `utilerrors.NewAggregate(errs).Error()`: one error as itself, several (without repeats) as `[a, b]`. */
export function aggregate(errors: readonly string[]): string {
  const unique = [...new Set(errors)];
  return unique.length === 1 ? unique[0]! : `[${unique.join(', ')}]`;
}
