/** What the rbac.authorization.k8s.io/v1 kinds share: rule validation, and the behaviour of RoleBindings and ClusterRoleBindings. */
import type { StatusCause } from 'kubeloop/api';
import { ageColumn, col, type KindBehaviour, nameColumn } from '../shared/behaviour.js';
import { docs } from '../shared/descriptions.js';
import {
  dig,
  ensureObj,
  GoValue,
  goQuote,
  invalid,
  isDNS1123Subdomain,
  isObj,
  isValidPathSegmentName,
  notSupported,
  type Obj,
  objs,
  required,
  since,
  str,
  strs,
} from '../shared/util.js';
import { bindingEscalationCheck } from './escalation.js';

const GROUP = 'rbac.authorization.k8s.io';

/** `ValidatePolicyRule`. */
export function validateRules(obj: Obj, namespaced: boolean): StatusCause[] {
  const out: StatusCause[] = [];
  objs(obj.rules).forEach((rule, i) => {
    const p = `rules[${i}]`;
    if (strs(rule.verbs).length === 0)
      out.push(required(`${p}.verbs`, 'verbs must contain at least one value'));
    const urls = strs(rule.nonResourceURLs);
    if (urls.length > 0) {
      if (namespaced)
        out.push(invalid(`${p}.nonResourceURLs`, urls, 'namespaced rules cannot apply to non-resource URLs'));
      if (
        strs(rule.apiGroups).length > 0 ||
        strs(rule.resources).length > 0 ||
        strs(rule.resourceNames).length > 0
      ) {
        out.push(
          invalid(
            `${p}.nonResourceURLs`,
            urls,
            'rules cannot apply to both regular resources and non-resource URLs',
          ),
        );
      }
      return;
    }
    if (strs(rule.apiGroups).length === 0) {
      out.push(required(`${p}.apiGroups`, 'resource rules must supply at least one api group'));
    }
    if (strs(rule.resources).length === 0) {
      out.push(required(`${p}.resources`, 'resource rules must supply at least one resource'));
    }
  });
  return out;
}

function defaultBinding(obj: Obj): void {
  const roleRef = ensureObj(obj, 'roleRef');
  if (!str(roleRef.apiGroup)) roleRef.apiGroup = GROUP;
  for (const s of objs(obj.subjects)) {
    if (str(s.apiGroup)) continue;
    // The default is "", which Go's omitempty leaves out of the stored JSON.
    if (s.kind === 'ServiceAccount') delete s.apiGroup;
    else if (s.kind === 'User' || s.kind === 'Group') s.apiGroup = GROUP;
  }
}

const goRoleRef = (r: unknown): GoValue =>
  new GoValue(
    `rbac.RoleRef{APIGroup:${goQuote(str(dig(r, 'apiGroup')))}, Kind:${goQuote(str(dig(r, 'kind')))}, Name:${goQuote(str(dig(r, 'name')))}}`,
  );

function validateBinding(obj: Obj, old: Obj | undefined, namespaced: boolean): StatusCause[] {
  const out: StatusCause[] = [];
  const roleRef = isObj(obj.roleRef) ? obj.roleRef : {};
  if (roleRef.apiGroup !== GROUP) out.push(notSupported('roleRef.apiGroup', str(roleRef.apiGroup), [GROUP]));
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(str(roleRef.kind))) out.push(notSupported('roleRef.kind', str(roleRef.kind), kinds));
  const refName = str(roleRef.name);
  if (!refName) out.push(required('roleRef.name'));
  else for (const m of isValidPathSegmentName(refName)) out.push(invalid('roleRef.name', refName, m));
  objs(obj.subjects).forEach((s, i) => {
    const p = `subjects[${i}]`;
    const name = str(s.name);
    if (!name) out.push(required(`${p}.name`));
    switch (s.kind) {
      case 'ServiceAccount':
        if (name) for (const m of isDNS1123Subdomain(name)) out.push(invalid(`${p}.name`, name, m));
        if (str(s.apiGroup)) out.push(notSupported(`${p}.apiGroup`, str(s.apiGroup), ['']));
        if (!namespaced && !str(s.namespace)) out.push(required(`${p}.namespace`));
        break;
      case 'User':
      case 'Group':
        if (s.apiGroup !== GROUP) out.push(notSupported(`${p}.apiGroup`, str(s.apiGroup), [GROUP]));
        break;
      default:
        out.push(notSupported(`${p}.kind`, str(s.kind), ['ServiceAccount', 'User', 'Group']));
    }
  });
  if (old) {
    const prev = isObj(old.roleRef) ? old.roleRef : {};
    if (['apiGroup', 'kind', 'name'].some((k) => str(prev[k]) !== str(roleRef[k]))) {
      out.push(invalid('roleRef', goRoleRef(roleRef), 'cannot change roleRef'));
    }
  }
  return out;
}

/** rbac `SubjectsStrings`: users, groups and `namespace/name` of service accounts. */
function subjectCells(obj: Obj): [string, string, string] {
  const users: string[] = [];
  const groups: string[] = [];
  const sas: string[] = [];
  for (const s of objs(obj.subjects)) {
    if (s.kind === 'ServiceAccount') sas.push(`${str(s.namespace)}/${str(s.name)}`);
    else if (s.kind === 'User') users.push(str(s.name));
    else if (s.kind === 'Group') groups.push(str(s.name));
  }
  return [users.join(', '), groups.join(', '), sas.join(', ')];
}

export const bindingBehaviour = (namespaced: boolean): KindBehaviour => {
  const what = namespaced ? 'roleBinding' : 'clusterRoleBinding';
  return {
    defaults: defaultBinding,
    storage: { confirmWrite: bindingEscalationCheck(namespaced ? 'rolebindings' : 'clusterrolebindings') },
    validate: (obj, old) => validateBinding(obj, old, namespaced),
    columns: [
      nameColumn(),
      col('Role', 'string', namespaced ? docs.roleBinding.roleRef : docs.clusterRoleBinding.roleRef),
      ageColumn(),
      col('Users', 'string', `Users in the ${what}`, 1),
      col('Groups', 'string', `Groups in the ${what}`, 1),
      col('ServiceAccounts', 'string', `ServiceAccounts in the ${what}`, 1),
    ],
    row(obj, now) {
      const roleRef = isObj(obj.roleRef) ? obj.roleRef : {};
      return [
        str(dig(obj, 'metadata', 'name')),
        `${str(roleRef.kind)}/${str(roleRef.name)}`,
        since(dig(obj, 'metadata', 'creationTimestamp'), now),
        ...subjectCells(obj),
      ];
    },
  };
};
