/**
 * Validation shared by ValidatingAdmissionPolicy and its binding (kube's
 * `validateMatchResources`, `validateParamKind`, `validateParamRef`, `validateValidationActions`).
 */
import type { StatusCause } from 'kubeloop/api';
import {
  duplicate,
  forbidden,
  invalid,
  isDNS1035Label,
  isDNS1123Subdomain,
  isObj,
  isValidPathSegmentName,
  notSupported,
  objs,
  required,
  str,
  strs,
  validateLabelSelector,
} from '../shared/util.js';
import { validateRule } from './shared.js';

function namedRules(rules: unknown, p: string): StatusCause[] {
  const out: StatusCause[] = [];
  objs(rules).forEach((rule, i) => {
    const seen = new Set<string>();
    strs(rule.resourceNames).forEach((n, j) => {
      for (const m of isValidPathSegmentName(n)) out.push(invalid(`${p}[${i}].resourceNames[${j}]`, n, m));
      if (seen.has(n)) out.push(duplicate(`${p}[${i}].resourceNames[${j}]`, n));
      seen.add(n);
    });
    out.push(...validateRule(rule, `${p}[${i}]`));
  });
  return out;
}

/** `validateMatchResources` (the defaults fill matchPolicy and the selectors first). */
export function validateMatchResources(m: unknown, p: string): StatusCause[] {
  if (!isObj(m)) return [];
  const out: StatusCause[] = [];
  if (m.matchPolicy === undefined || m.matchPolicy === null) out.push(required(`${p}.matchPolicy`));
  else if (!['Equivalent', 'Exact'].includes(str(m.matchPolicy)))
    out.push(notSupported(`${p}.matchPolicy`, m.matchPolicy, ['Equivalent', 'Exact']));
  for (const s of ['namespaceSelector', 'objectSelector']) {
    if (!isObj(m[s])) out.push(required(`${p}.${s}`));
    else out.push(...validateLabelSelector(m[s], `${p}.${s}`));
  }
  out.push(...namedRules(m.resourceRules, `${p}.resourceRules`));
  out.push(...namedRules(m.excludeResourceRules, `${p}.excludeResourceRules`));
  return out;
}

/** `validateParamKind`. */
export function validateParamKind(pk: Record<string, unknown>, p: string): StatusCause[] {
  const out: StatusCause[] = [];
  const apiVersion = str(pk.apiVersion);
  if (!apiVersion) out.push(required(`${p}.apiVersion`));
  else {
    const parts = apiVersion.split('/');
    if (parts.length > 2)
      out.push(invalid(`${p}.apiVersion`, apiVersion, `unexpected GroupVersion string: ${apiVersion}`));
    else {
      const [group, version] = parts.length === 2 ? [parts[0] ?? '', parts[1] ?? ''] : ['', apiVersion];
      if (group) {
        const errs = isDNS1123Subdomain(group);
        if (errs.length > 0) out.push(invalid(`${p}.apiVersion`, group, errs.join(',')));
      }
      if (!version) out.push(invalid(`${p}.apiVersion`, apiVersion, 'version must be specified'));
      else {
        const errs = isDNS1035Label(version);
        if (errs.length > 0) out.push(invalid(`${p}.apiVersion`, version, errs.join(',')));
      }
    }
  }
  const kind = str(pk.kind);
  if (!kind) out.push(required(`${p}.kind`));
  else {
    const errs = isDNS1035Label(kind.toLowerCase());
    if (errs.length > 0)
      out.push(
        invalid(`${p}.kind`, kind, `may have mixed case, but should otherwise match: ${errs.join(',')}`),
      );
  }
  return out;
}

/** `validateParamRef`. */
export function validateParamRef(ref: unknown, p: string): StatusCause[] {
  if (!isObj(ref)) return [];
  const out: StatusCause[] = [];
  const name = str(ref.name);
  const hasSelector = ref.selector !== undefined && ref.selector !== null;
  if (name) {
    for (const m of isValidPathSegmentName(name)) out.push(invalid(`${p}.name`, name, m));
    if (hasSelector) out.push(forbidden(`${p}.name`, 'name and selector are mutually exclusive'));
  }
  if (hasSelector) {
    out.push(...validateLabelSelector(ref.selector, `${p}.selector`));
    if (name) out.push(forbidden(`${p}.selector`, 'name and selector are mutually exclusive'));
  }
  if (!name && !hasSelector) out.push(required(p, 'one of name or selector must be specified'));
  const action = ref.parameterNotFoundAction;
  if (action === undefined || action === null || action === '')
    out.push(required(`${p}.parameterNotFoundAction`));
  else if (action !== 'Allow' && action !== 'Deny')
    out.push(notSupported(`${p}.parameterNotFoundAction`, action, ['Deny', 'Allow']));
  return out;
}

/** `validateValidationActions`. */
export function validateValidationActions(actions: string[], p: string): StatusCause[] {
  const out: StatusCause[] = [];
  const seen = new Set<string>();
  actions.forEach((a, i) => {
    if (!['Audit', 'Deny', 'Warn'].includes(a))
      out.push(notSupported(`${p}[${i}]`, a, ['Audit', 'Deny', 'Warn']));
    if (seen.has(a)) out.push(duplicate(`${p}[${i}]`, a));
    seen.add(a);
  });
  if (seen.has('Deny') && seen.has('Warn'))
    // The value as Go's %#v prints the internal type's slice.
    out.push({
      reason: 'FieldValueInvalid',
      field: p,
      message: `Invalid value: []admissionregistration.ValidationAction{${actions.map((a) => JSON.stringify(a)).join(', ')}}: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)`,
    });
  if (seen.size === 0) out.push(required(p, 'at least one validation action is required'));
  return out;
}
