/**
 * A FlowSchema's rules as kube validates them (`ValidateFlowSchemaPolicyRulesWithSubjects` and
 * what it calls): subjects of each kind, resource and non-resource rules with `*` alone.
 */
import type { StatusCause } from 'kubeloop/api';
import {
  forbidden,
  GoValue,
  goStrings,
  invalid,
  isDNS1123Label,
  isDNS1123Subdomain,
  isObj,
  isSet,
  notSupported,
  type Obj,
  objs,
  required,
  str,
  strs,
} from '../shared/util.js';

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'proxy', 'update', 'watch'];
const SUBJECT_KINDS = ['Group', 'ServiceAccount', 'User'];
const NS_INTRO = "each member of this list must be '*' or a DNS-1123 label; ";

export function validateRule(rule: Obj, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const subjects = objs(rule.subjects);
  if (subjects.length === 0)
    out.push(required(`${path}.subjects`, 'subjects must contain at least one value'));
  subjects.forEach((s, i) => {
    out.push(...validateSubject(s, `${path}.subjects[${i}]`));
  });
  const resourceRules = objs(rule.resourceRules);
  const nonResourceRules = objs(rule.nonResourceRules);
  if (resourceRules.length === 0 && nonResourceRules.length === 0)
    out.push(required(path, 'at least one of resourceRules and nonResourceRules has to be non-empty'));
  resourceRules.forEach((r, i) => {
    out.push(...validateResourceRule(r, `${path}.resourceRules[${i}]`));
  });
  nonResourceRules.forEach((r, i) => {
    out.push(...validateNonResourceRule(r, `${path}.nonResourceRules[${i}]`));
  });
  return out;
}

const FORBIDDEN_BESIDE: Record<string, string> = {
  user: "user is forbidden when subject kind is not 'User'",
  group: "group is forbidden when subject kind is not 'Group'",
  serviceAccount: "serviceAccount is forbidden when subject kind is not 'ServiceAccount'",
};
const FIELD_OF: Record<string, string> = { User: 'user', Group: 'group', ServiceAccount: 'serviceAccount' };

/** `ValidateFlowSchemaSubject`: the kind's own field, and none of the others. */
function validateSubject(subject: Obj, path: string): StatusCause[] {
  const kind = str(subject.kind);
  const own = FIELD_OF[kind];
  if (!own) return [notSupported(`${path}.kind`, kind, SUBJECT_KINDS)];
  const out: StatusCause[] = [];
  const value = subject[own];
  const p = `${path}.${own}`;
  if (!isObj(value)) out.push(required(p, `${own} is required when subject kind is '${kind}'`));
  else if (kind === 'ServiceAccount') out.push(...validateServiceAccount(value, p));
  else if (!str(value.name)) out.push(required(`${p}.name`));
  for (const other of ['serviceAccount', 'user', 'group'].filter((f) => f !== own))
    if (isSet(subject[other])) out.push(forbidden(`${path}.${other}`, FORBIDDEN_BESIDE[other]!));
  return out;
}

function validateServiceAccount(sa: Obj, path: string): StatusCause[] {
  const out: StatusCause[] = [];
  const name = str(sa.name);
  if (!name) out.push(required(`${path}.name`));
  else if (name !== '*')
    for (const msg of isDNS1123Subdomain(name)) out.push(invalid(`${path}.name`, name, msg));
  const ns = str(sa.namespace);
  if (!ns) out.push(required(`${path}.namespace`, 'must specify namespace for service account'));
  else for (const msg of isDNS1123Label(ns)) out.push(invalid(`${path}.namespace`, ns, msg));
  return out;
}

/** A list that is `*` alone, or `*` beside others (refused with `what`). */
function starAlone(list: string[], path: string, what: string): StatusCause[] {
  return list.length > 1 && list.includes('*')
    ? [invalid(path, new GoValue(goStrings(list)), `if '*' is present, must not specify other ${what}`)]
    : [];
}

function validateVerbs(verbs: string[], path: string): StatusCause[] {
  if (verbs.length === 0) return [required(path, 'verbs must contain at least one value')];
  if (verbs.includes('*')) return starAlone(verbs, path, 'verbs');
  return verbs.every((v) => VERBS.includes(v))
    ? []
    : [notSupported(path, new GoValue(goStrings(verbs)), VERBS)];
}

function validateResourceRule(rule: Obj, path: string): StatusCause[] {
  const out = validateVerbs(strs(rule.verbs), `${path}.verbs`);
  const groups = strs(rule.apiGroups);
  if (groups.length === 0)
    out.push(required(`${path}.apiGroups`, 'resource rules must supply at least one api group'));
  else out.push(...starAlone(groups, `${path}.apiGroups`, 'api groups'));
  const resources = strs(rule.resources);
  if (resources.length === 0)
    out.push(required(`${path}.resources`, 'resource rules must supply at least one resource'));
  else out.push(...starAlone(resources, `${path}.resources`, 'resources'));
  const namespaces = strs(rule.namespaces);
  if (namespaces.length === 0 && rule.clusterScope !== true)
    out.push(
      required(
        `${path}.namespaces`,
        'resource rules that are not cluster scoped must supply at least one namespace',
      ),
    );
  else if (namespaces.includes('*')) out.push(...starAlone(namespaces, `${path}.namespaces`, 'namespaces'));
  else
    namespaces.forEach((ns, i) => {
      for (const msg of isDNS1123Label(ns)) out.push(invalid(`${path}.namespaces[${i}]`, ns, NS_INTRO + msg));
    });
  return out;
}

function validateNonResourceRule(rule: Obj, path: string): StatusCause[] {
  const out = validateVerbs(strs(rule.verbs), `${path}.verbs`);
  const urls = strs(rule.nonResourceURLs);
  if (urls.length === 0)
    out.push(required(`${path}.nonResourceURLs`, 'nonResourceURLs must contain at least one value'));
  else if (urls.includes('*')) out.push(...starAlone(urls, `${path}.nonResourceURLs`, 'non-resource URLs'));
  else
    urls.forEach((url, i) => {
      const msg = urlPathError(url);
      if (msg) out.push(invalid(`${path}.nonResourceURLs[${i}]`, url, msg));
    });
  return out;
}

/** `ValidateNonResourceURLPath`. */
function urlPathError(path: string): string | undefined {
  if (!path) return 'must not be empty';
  if (path === '/') return undefined;
  if (!path.startsWith('/')) return 'must start with slash';
  if (path.includes(' ')) return 'must not contain white-space';
  if (path.includes('//')) return 'must not contain double slash';
  const stars = path.split('*').length - 1;
  if (stars > 1 || (stars === 1 && !path.endsWith('/*'))) return 'wildcard can only do suffix matching';
  return undefined;
}
