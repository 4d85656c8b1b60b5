/**
 * Validation of a CRD's spec as a whole: group, scope, names, versions (deprecation, storage,
 * per-version parts), stored versions and the API approval annotation of protected groups.
 */
import type { StatusCause } from '../../api/status.js';
import {
  fieldErrors,
  goStringSlice,
  isDNS1035Label,
  isDNS1123Subdomain,
  rawFieldValue,
} from '../../api/validation.js';
import { type Structural, toStructural } from '../structural.js';
import type { CustomResourceDefinition } from '../types.js';
import { APPROVAL_ANNOTATION, child, type InternalSpec, type InternalVersion, idx } from './internal.js';
import { hasSchemaWith, validateValidation } from './schema-validation.js';
import {
  validateColumn,
  validateConversion,
  validateSelectableFields,
  validateSubresources,
} from './subresources.js';

export function validateNames(
  names: Partial<InternalSpec['names']> | undefined,
  path: string,
): StatusCause[] {
  const errs: StatusCause[] = [];
  if (!names) return errs;
  const dns = (v: string) => isDNS1035Label(v).join(',');
  if (names.plural && dns(names.plural))
    errs.push(fieldErrors.invalid(child(path, 'plural'), names.plural, dns(names.plural)));
  if (names.singular && dns(names.singular))
    errs.push(fieldErrors.invalid(child(path, 'singular'), names.singular, dns(names.singular)));
  if (names.kind && dns(names.kind.toLowerCase()))
    errs.push(
      fieldErrors.invalid(
        child(path, 'kind'),
        names.kind,
        `may have mixed case, but should otherwise match: ${dns(names.kind.toLowerCase())}`,
      ),
    );
  if (names.listKind && dns(names.listKind.toLowerCase()))
    errs.push(
      fieldErrors.invalid(
        child(path, 'listKind'),
        names.listKind,
        `may have mixed case, but should otherwise match: ${dns(names.listKind.toLowerCase())}`,
      ),
    );
  (names.shortNames ?? []).forEach((s, i) => {
    if (dns(s)) errs.push(fieldErrors.invalid(idx(child(path, 'shortNames'), i), s, dns(s)));
  });
  if (names.kind && names.kind === names.listKind)
    errs.push(
      fieldErrors.invalid(child(path, 'listKind'), names.listKind, 'kind and listKind may not be the same'),
    );
  (names.categories ?? []).forEach((c, i) => {
    if (dns(c)) errs.push(fieldErrors.invalid(idx(child(path, 'categories'), i), c, dns(c)));
  });
  return errs;
}

function validateDeprecationWarning(deprecated: boolean, warning: string | undefined): string[] {
  if (!deprecated && warning !== undefined) return ['can only be set for deprecated versions'];
  if (warning === undefined) return [];
  const errs: string[] = [];
  if (Buffer.byteLength(warning) > 256) errs.push('must be <= 256 characters long');
  if (warning.length === 0) errs.push('must not be an empty string');
  let i = 0;
  for (const ch of warning) {
    if (/[\p{Cc}]/u.test(ch)) {
      errs.push(`must only contain printable UTF-8 characters; control character found at index ${i}`);
      break;
    }
    if (!/[\p{L}\p{M}\p{N}\p{P}\p{S} ]/u.test(ch)) {
      errs.push(`must only contain printable UTF-8 characters; non-printable character found at index ${i}`);
      break;
    }
    i += Buffer.byteLength(ch);
  }
  return errs;
}

// A Go %#v of []apiextensions.CustomResourceDefinitionVersion cannot be reproduced (it prints
// pointers); this shows the same type with the version names.
const goVersions = (versions: InternalVersion[]) =>
  rawFieldValue(
    `[]apiextensions.CustomResourceDefinitionVersion{${versions.map((v) => `apiextensions.CustomResourceDefinitionVersion{Name:${JSON.stringify(v.name)}, Served:${v.served}, Storage:${v.storage}, …}`).join(', ')}}`,
  );

export function validateSpec(spec: InternalSpec, path: string): StatusCause[] {
  const errs: StatusCause[] = [];
  if (!spec.group) errs.push(fieldErrors.required(child(path, 'group')));
  else {
    const e = isDNS1123Subdomain(spec.group);
    if (e.length > 0) errs.push(fieldErrors.invalid(child(path, 'group'), spec.group, e.join(',')));
    else if (spec.group.split('.').length < 2)
      errs.push(
        fieldErrors.invalid(child(path, 'group'), spec.group, 'should be a domain with at least one dot'),
      );
  }
  if (!spec.scope) errs.push(fieldErrors.required(child(path, 'scope')));
  else if (spec.scope !== 'Cluster' && spec.scope !== 'Namespaced')
    errs.push(fieldErrors.notSupported(child(path, 'scope'), spec.scope, ['Cluster', 'Namespaced']));

  if (!spec.validation?.openAPIV3Schema) {
    spec.versions.forEach((v, i) => {
      if (!v.schema?.openAPIV3Schema)
        errs.push(
          fieldErrors.required(`${path}.versions[${i}].schema.openAPIV3Schema`, 'schemas are required'),
        );
    });
  }
  const allSchemas = [
    spec.validation?.openAPIV3Schema,
    ...spec.versions.map((v) => v.schema?.openAPIV3Schema),
  ];
  if (spec.preserveUnknownFields && allSchemas.some((s) => hasSchemaWith(s, (x) => x.default !== undefined)))
    errs.push(
      fieldErrors.invalid(
        child(path, 'preserveUnknownFields'),
        true,
        'must be false in order to use defaults in the schema',
      ),
    );

  let storage = 0;
  const names = new Set<string>();
  let unique = true;
  const anyStatus = !!spec.subresources?.status || spec.versions.some((v) => !!v.subresources?.status);
  spec.versions.forEach((v, i) => {
    const vp = idx(child(path, 'versions'), i);
    if (v.storage) storage++;
    if (names.has(v.name)) unique = false;
    names.add(v.name);
    const dn = isDNS1035Label(v.name ?? '');
    if (dn.length > 0) errs.push(fieldErrors.invalid(child(vp, 'name'), v.name ?? '', dn.join(',')));
    const subresources = spec.versions.some((x) => x.subresources !== undefined)
      ? v.subresources
      : spec.subresources;
    for (const m of validateDeprecationWarning(v.deprecated === true, v.deprecationWarning))
      errs.push(fieldErrors.invalid(child(vp, 'deprecationWarning'), v.deprecationWarning ?? null, m));
    errs.push(...validateValidation(v.schema, !!subresources?.status, child(vp, 'schema')));
    errs.push(...validateSubresources(v.subresources, child(vp, 'subresources')));
    (v.additionalPrinterColumns ?? []).forEach((c, j) => {
      errs.push(...validateColumn(c, idx(child(vp, 'additionalPrinterColumns'), j)));
    });
    if (v.selectableFields?.length) {
      const s = v.schema?.openAPIV3Schema;
      if (!s)
        errs.push(
          fieldErrors.invalid(
            child(vp, 'selectableFields'),
            '',
            'selectableFields may only be set when version.schema.openAPIV3Schema is not included',
          ),
        );
      else {
        let st: Structural | undefined;
        try {
          st = toStructural(s);
        } catch (e) {
          errs.push(
            fieldErrors.invalid(child(vp, 'schema.openAPIV3Schema'), '', String((e as Error).message)),
          );
        }
        errs.push(...validateSelectableFields(v.selectableFields, st, child(vp, 'selectableFields')));
      }
    }
  });
  if (!unique)
    errs.push(
      fieldErrors.invalid(
        child(path, 'versions'),
        goVersions(spec.versions),
        'must contain unique version names',
      ),
    );
  if (storage !== 1)
    errs.push(
      fieldErrors.invalid(
        child(path, 'versions'),
        goVersions(spec.versions),
        'must have exactly one version marked as storage version',
      ),
    );
  if (spec.version) {
    const dn = isDNS1035Label(spec.version);
    if (dn.length > 0) errs.push(fieldErrors.invalid(child(path, 'version'), spec.version, dn.join(',')));
  }
  const n = spec.names ?? {};
  if (!n.plural) errs.push(fieldErrors.required(`${path}.names.plural`));
  if (!n.singular) errs.push(fieldErrors.required(`${path}.names.singular`));
  if (!n.kind) errs.push(fieldErrors.required(`${path}.names.kind`));
  if (!n.listKind) errs.push(fieldErrors.required(`${path}.names.listKind`));
  errs.push(...validateNames(n, child(path, 'names')));
  errs.push(...validateValidation(spec.validation, anyStatus, child(path, 'validation')));
  errs.push(...validateSubresources(spec.subresources, child(path, 'subresources')));
  (spec.additionalPrinterColumns ?? []).forEach((c, j) => {
    errs.push(...validateColumn(c, idx(child(path, 'additionalPrinterColumns'), j)));
  });
  if (spec.selectableFields?.length) {
    const s = spec.validation?.openAPIV3Schema;
    if (!s)
      errs.push(
        fieldErrors.invalid(
          child(path, 'selectableFields'),
          '',
          'selectableFields may only be set when validations.schema is included',
        ),
      );
    else {
      let st: Structural | undefined;
      try {
        st = toStructural(s);
      } catch (e) {
        errs.push(
          fieldErrors.invalid(child(path, 'schema.openAPIV3Schema'), '', String((e as Error).message)),
        );
      }
      errs.push(...validateSelectableFields(spec.selectableFields, st, child(path, 'selectableFields')));
    }
  }
  if (spec.conversion && spec.conversion.strategy !== 'None' && spec.preserveUnknownFields)
    errs.push(
      fieldErrors.invalid(
        `${path}.conversion.strategy`,
        spec.conversion.strategy ?? '',
        'must be None if spec.preserveUnknownFields is true',
      ),
    );
  errs.push(...validateConversion(spec.conversion, child(path, 'conversion')));
  return errs;
}

/** True for the groups that need API review approval (`*.k8s.io`, `*.kubernetes.io`). */
export const isProtectedCommunityGroup = (group: string): boolean =>
  group === 'k8s.io' ||
  group.endsWith('.k8s.io') ||
  group === 'kubernetes.io' ||
  group.endsWith('.kubernetes.io');

/** How a protected group's `api-approved.kubernetes.io` annotation reads (`apihelpers.GetAPIApprovalState`). */
export type ApiApprovalState = 'missing' | 'bypassed' | 'approved' | 'invalid';

/**
 * The approval state of a CRD's annotations and the reason kube gives for it — what the
 * `KubernetesAPIApprovalPolicyConformant` condition reports for a protected group.
 *
 * @example
 * ```ts
 * apiApprovalState({ 'api-approved.kubernetes.io': 'unapproved, experimental' });
 * // ['bypassed', 'not approved: "unapproved, experimental"']
 * ```
 */
export function apiApprovalState(
  annotations: Record<string, string> | undefined,
): [ApiApprovalState, string] {
  const a = annotations?.[APPROVAL_ANNOTATION] ?? '';
  if (a.length === 0)
    return [
      'missing',
      `protected groups must have approval annotation "${APPROVAL_ANNOTATION}", see https://github.com/kubernetes/enhancements/pull/1111`,
    ];
  if (a.startsWith('unapproved')) return ['bypassed', `not approved: "${a}"`];
  try {
    const u = new URL(a);
    if (u.host && u.protocol) return ['approved', `approved in ${a}`];
  } catch {
    // fall through
  }
  return [
    'invalid',
    `protected groups must have approval annotation "${APPROVAL_ANNOTATION}" with either a URL or a reason starting with "unapproved", see https://github.com/kubernetes/enhancements/pull/1111`,
  ];
}

export function validateAPIApproval(
  crd: CustomResourceDefinition,
  old: CustomResourceDefinition | undefined,
): StatusCause[] {
  if (!isProtectedCommunityGroup(crd.spec?.group ?? '')) return [];
  const [state, reason] = apiApprovalState(crd.metadata?.annotations);
  if (old && apiApprovalState(old.metadata?.annotations)[0] === state) return [];
  const p = `metadata.annotations[${APPROVAL_ANNOTATION}]`;
  if (state === 'missing') return [fieldErrors.required(p, reason)];
  if (state === 'invalid')
    return [fieldErrors.invalid(p, crd.metadata?.annotations?.[APPROVAL_ANNOTATION] ?? '', reason)];
  return [];
}

export function storedVersionsFor(
  crd: CustomResourceDefinition,
  old?: CustomResourceDefinition,
): string[] | null {
  const stored = [...(old?.status?.storedVersions ?? crd.status?.storedVersions ?? [])];
  const sv = crd.spec?.versions?.find((v) => v.storage);
  if (sv && !stored.includes(sv.name)) stored.push(sv.name);
  return stored.length > 0 ? stored : null;
}

export function validateStoredVersions(
  stored: string[] | null,
  versions: InternalVersion[],
  path: string,
): StatusCause[] {
  if (!stored || stored.length === 0)
    return [
      fieldErrors.invalid(
        path,
        rawFieldValue(goStringSlice(stored)),
        'must have at least one stored version',
      ),
    ];
  const errs: StatusCause[] = [];
  const remaining = new Map(stored.map((v, i) => [v, i]));
  for (const v of versions) {
    const ok = remaining.has(v.name);
    if (v.storage && !ok)
      errs.push(
        fieldErrors.invalid(
          path,
          rawFieldValue(goStringSlice(stored)),
          `must have the storage version ${v.name}`,
        ),
      );
    if (ok) remaining.delete(v.name);
  }
  for (const [v, i] of remaining)
    errs.push(
      fieldErrors.invalid(
        idx(path, i),
        v,
        `missing from spec.versions; ${v} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in ${v} and removes ${v} from status.storedVersions`,
      ),
    );
  return errs;
}
