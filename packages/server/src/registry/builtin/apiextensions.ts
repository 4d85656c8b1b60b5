/** apiextensions.k8s.io/v1 CustomResourceDefinitions: defaults and the checks of the CRD's own fields. */
import type { StatusCause } from 'kubeloop';
import { createdAtBehaviour } from './default.js';
import type { KindBehaviour } from './types.js';
import {
  dig,
  ensureObj,
  forbidden,
  GoValue,
  immutable,
  invalid,
  isDNS1035Label,
  isDNS1123Subdomain,
  isObj,
  notSupported,
  numOr,
  type Obj,
  objs,
  required,
  str,
  strs,
} from './util.js';

const APPROVAL = 'api-approved.kubernetes.io';

/** `SetDefaults_CustomResourceDefinition`, plus the stored version the strategy records for a new storage version. */
function defaults(obj: Obj): void {
  const spec = ensureObj(obj, 'spec');
  const names = ensureObj(spec, 'names');
  if (!str(names.singular)) names.singular = str(names.kind).toLowerCase();
  if (!str(names.listKind) && str(names.kind)) names.listKind = `${str(names.kind)}List`;
  if (!isObj(spec.conversion)) spec.conversion = { strategy: 'None' };
  const service = dig(spec, 'conversion', 'webhook', 'clientConfig', 'service');
  if (isObj(service) && numOr(service.port) === undefined) service.port = 443;
  const status = ensureObj(obj, 'status');
  // CustomResourceDefinitionNames is a struct, so Go serializes an empty acceptedNames.
  if (!isObj(status.acceptedNames)) status.acceptedNames = { kind: '', plural: '' };
  const storage = objs(spec.versions).find((v) => v.storage === true);
  const stored = strs(status.storedVersions);
  if (storage && !stored.includes(str(storage.name))) status.storedVersions = [...stored, str(storage.name)];
}

/** `apihelpers.IsProtectedCommunityGroup`. */
const isProtected = (group: string): boolean =>
  group === 'k8s.io' ||
  group.endsWith('.k8s.io') ||
  group === 'kubernetes.io' ||
  group.endsWith('.kubernetes.io');

type ApprovalState = 'missing' | 'bypassed' | 'approved' | 'invalid';

function approvalState(annotations: unknown): [ApprovalState, string] {
  const a = str(dig(annotations, APPROVAL));
  if (a === '') {
    return [
      'missing',
      `protected groups must have approval annotation "${APPROVAL}", see https://github.com/kubernetes/enhancements/pull/1111`,
    ];
  }
  if (a.startsWith('unapproved')) return ['bypassed', `not approved: "${a}"`];
  try {
    const u = new URL(a);
    if (u.host && u.protocol) return ['approved', `approved in ${a}`];
  } catch {
    // not a URL: invalid below
  }
  return [
    'invalid',
    `protected groups must have approval annotation "${APPROVAL}" with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111`,
  ];
}

function validateApproval(obj: Obj, old: Obj | undefined): StatusCause[] {
  if (!isProtected(str(dig(obj, 'spec', 'group')))) return [];
  const annotations = dig(obj, 'metadata', 'annotations');
  const [state, reason] = approvalState(annotations);
  if (old && approvalState(dig(old, 'metadata', 'annotations'))[0] === state) return [];
  const field = `metadata.annotations[${APPROVAL}]`;
  if (state === 'missing') return [required(field, reason)];
  if (state === 'invalid') return [invalid(field, str(dig(annotations, APPROVAL)), reason)];
  return [];
}

function validateNames(names: Obj): StatusCause[] {
  const out: StatusCause[] = [];
  const p = 'spec.names';
  for (const f of ['plural', 'singular', 'kind', 'listKind'])
    if (!str(names[f])) out.push(required(`${p}.${f}`));
  for (const f of ['plural', 'singular']) {
    const v = str(names[f]);
    const errs = isDNS1035Label(v);
    if (v && errs.length > 0) out.push(invalid(`${p}.${f}`, v, errs.join(',')));
  }
  for (const f of ['kind', 'listKind']) {
    const v = str(names[f]);
    const errs = isDNS1035Label(v.toLowerCase());
    if (v && errs.length > 0)
      out.push(invalid(`${p}.${f}`, v, `may have mixed case, but should otherwise match: ${errs.join(',')}`));
  }
  for (const f of ['shortNames', 'categories']) {
    strs(names[f]).forEach((v, i) => {
      const errs = isDNS1035Label(v);
      if (errs.length > 0) out.push(invalid(`${p}.${f}[${i}]`, v, errs.join(',')));
    });
  }
  if (str(names.kind) && names.kind === names.listKind) {
    out.push(invalid(`${p}.listKind`, str(names.listKind), 'kind and listKind may not be the same'));
  }
  return out;
}

function validateConversion(conversion: unknown): StatusCause[] {
  if (!isObj(conversion)) return [];
  const p = 'spec.conversion';
  const webhook = isObj(conversion.webhook) ? conversion.webhook : undefined;
  switch (conversion.strategy) {
    case 'None':
      return webhook && isObj(webhook.clientConfig)
        ? [forbidden(`${p}.webhookClientConfig`, 'should not be set when strategy is not set to Webhook')]
        : [];
    case 'Webhook': {
      const out: StatusCause[] = [];
      if (!webhook || !isObj(webhook.clientConfig)) {
        out.push(required(`${p}.webhookClientConfig`, 'required when strategy is set to Webhook'));
      } else {
        const cc = webhook.clientConfig;
        if ((typeof cc.url === 'string') === isObj(cc.service)) {
          out.push(required(`${p}.webhookClientConfig`, 'exactly one of url or service is required'));
        }
      }
      const versions = strs(webhook?.conversionReviewVersions);
      if (versions.length === 0)
        out.push(required(`${p}.conversionReviewVersions`, 'must specify one of v1, v1beta1'));
      else if (!versions.some((v) => v === 'v1' || v === 'v1beta1')) {
        out.push(
          invalid(`${p}.conversionReviewVersions`, versions, 'must include at least one of v1, v1beta1'),
        );
      }
      return out;
    }
    default:
      return [notSupported(`${p}.strategy`, str(conversion.strategy), ['None', 'Webhook'])];
  }
}

/** Go's `%#v` of the internal `spec.versions` (pointers print as addresses; ours are placeholders). */
function versionsValue(versions: Obj[]): GoValue {
  const ptr = (v: unknown, type: string): string =>
    `(*apiextensions.${type})(${v === undefined || v === null ? 'nil' : '0xc000000000'})`;
  const one = (v: Obj): string =>
    `apiextensions.CustomResourceDefinitionVersion{Name:${JSON.stringify(str(v.name))}, Served:${v.served === true}, Storage:${
      v.storage === true
    }, Deprecated:${v.deprecated === true}, DeprecationWarning:(*string)(${
      typeof v.deprecationWarning === 'string' ? '0xc000000000' : 'nil'
    }), Schema:${ptr(v.schema, 'CustomResourceValidation')}, Subresources:${ptr(v.subresources, 'CustomResourceSubresources')}, AdditionalPrinterColumns:[]apiextensions.CustomResourceColumnDefinition(nil), SelectableFields:[]apiextensions.SelectableField(nil)}`;
  return new GoValue(`[]apiextensions.CustomResourceDefinitionVersion{${versions.map(one).join(', ')}}`);
}

function validate(obj: Obj, old?: Obj): StatusCause[] {
  const spec = isObj(obj.spec) ? obj.spec : {};
  const names = isObj(spec.names) ? spec.names : {};
  const out: StatusCause[] = [];
  const group = str(spec.group);
  const name = str(dig(obj, 'metadata', 'name'));
  if (name !== `${str(names.plural)}.${group}`) {
    out.push(invalid('metadata.name', name, 'must be spec.names.plural+"."+spec.group'));
  }
  if (!group) out.push(required('spec.group'));
  else {
    const errs = isDNS1123Subdomain(group);
    if (errs.length > 0) out.push(invalid('spec.group', group, errs.join(',')));
    else if (group.split('.').length < 2)
      out.push(invalid('spec.group', group, 'should be a domain with at least one dot'));
  }
  const scope = str(spec.scope);
  if (!scope) out.push(required('spec.scope'));
  else if (scope !== 'Cluster' && scope !== 'Namespaced')
    out.push(notSupported('spec.scope', scope, ['Cluster', 'Namespaced']));
  const versions = objs(spec.versions);
  const seen = new Set<string>();
  let unique = true;
  versions.forEach((v, i) => {
    const vn = str(v.name);
    if (seen.has(vn)) unique = false;
    seen.add(vn);
    const errs = isDNS1035Label(vn);
    if (errs.length > 0) out.push(invalid(`spec.versions[${i}].name`, vn, errs.join(',')));
    if (!isObj(dig(v, 'schema', 'openAPIV3Schema'))) {
      out.push(required(`spec.versions[${i}].schema.openAPIV3Schema`, 'schemas are required'));
    }
  });
  if (!unique)
    out.push(invalid('spec.versions', versionsValue(versions), 'must contain unique version names'));
  if (versions.filter((v) => v.storage === true).length !== 1) {
    out.push(
      invalid(
        'spec.versions',
        versionsValue(versions),
        'must have exactly one version marked as storage version',
      ),
    );
  }
  out.push(...validateNames(names));
  out.push(...validateConversion(spec.conversion));
  out.push(...validateApproval(obj, old));
  if (old) {
    const oldSpec = isObj(old.spec) ? old.spec : {};
    out.push(...immutable('spec.group', spec.group, oldSpec.group));
    out.push(
      ...immutable('spec.names.plural', dig(spec, 'names', 'plural'), dig(oldSpec, 'names', 'plural')),
    );
  }
  return out;
}

/** apiextensions.k8s.io/v1 behaviours, keyed by plural resource. */
export const apiextensionsBehaviours: Record<string, KindBehaviour> = {
  customresourcedefinitions: { ...createdAtBehaviour(), defaults, validate },
};
