/**
 * Validation of CustomResourceDefinition objects, as apiextensions-apiserver's
 * `ValidateCustomResourceDefinition` / `ValidateCustomResourceDefinitionUpdate` run it on a
 * v1 CRD converted to the internal version (`crd/internal.ts`), part by part (`crd/*.ts`).
 *
 * The conversion matters for field paths: when every version has the same schema (or
 * subresources, or printer columns, or selectable fields), kube moves it to the top level, so
 * errors read `spec.validation.openAPIV3Schema…`, `spec.subresources…` or
 * `spec.additionalPrinterColumns[0]…`; otherwise they read `spec.versions[i].schema.openAPIV3Schema…`.
 */
import type { StatusCause } from '../api/status.js';
import { fieldErrors, validateObjectMeta, validateObjectMetaUpdate } from '../api/validation.js';
import { setCustomResourceDefinitionDefaults, toInternal } from './crd/internal.js';
import {
  storedVersionsFor,
  validateAPIApproval,
  validateNames,
  validateSpec,
  validateStoredVersions,
} from './crd/spec.js';
import type { CustomResourceDefinition } from './types.js';
import { deepCopyJSON, isObj } from './util.js';

const isEstablished = (crd: CustomResourceDefinition | undefined) =>
  crd?.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') === true;

/**
 * Validates a CustomResourceDefinition (apiextensions.k8s.io/v1) on create, or on update when
 * `old` is given, returning kube's causes in kube's order: metadata (name must be
 * `<plural>.<group>`), spec (group, scope, versions, names, schemas — structural, defaults, CEL —
 * subresources, printer columns, selectable fields, conversion), status, stored versions, the
 * API approval annotation of protected groups and `preserveUnknownFields`. On update, scope and
 * kind (once Established), group and plural are immutable.
 *
 * The CRD is not modified; v1 defaults (singular, listKind, conversion strategy) are applied to
 * a copy first, as the API server defaults before it validates.
 *
 * @example
 * ```ts
 * const causes = validateCustomResourceDefinition(crd);
 * if (causes.length > 0)
 *   throw ApiError.invalid({ group: 'apiextensions.k8s.io', kind: 'CustomResourceDefinition' }, crd.metadata.name, causes);
 * ```
 */
export function validateCustomResourceDefinition(
  crdIn: CustomResourceDefinition,
  oldIn?: CustomResourceDefinition,
): StatusCause[] {
  const crd = deepCopyJSON(crdIn);
  if (!isObj(crd.spec)) (crd as { spec: unknown }).spec = {};
  crd.spec.versions ??= [];
  crd.spec.names ??= {} as CustomResourceDefinition['spec']['names'];
  setCustomResourceDefinitionDefaults(crd);
  const old = oldIn ? deepCopyJSON(oldIn) : undefined;
  if (old?.spec) setCustomResourceDefinitionDefaults(old);
  const spec = toInternal(crd);
  const errs: StatusCause[] = [];

  if (old) {
    errs.push(...validateObjectMetaUpdate(crd.metadata, old.metadata));
  } else {
    const name = crd.metadata?.name ?? '';
    const metaErrs = validateObjectMeta(crd.metadata, {
      namespaced: false,
      nameValidation: 'subdomain',
      create: false,
    });
    const required = `${spec.names?.plural ?? ''}.${spec.group}`;
    const extra = (field: string, value: string) =>
      fieldErrors.invalid(field, value, 'must be spec.names.plural+"."+spec.group');
    const out: StatusCause[] = [];
    let placedName = false;
    const gen = crd.metadata?.generateName ?? '';
    for (let i = 0; i < metaErrs.length; i++) {
      const c = metaErrs[i] as StatusCause;
      out.push(c);
      const next = metaErrs[i + 1];
      if (
        c.field === 'metadata.generateName' &&
        next?.field !== 'metadata.generateName' &&
        gen &&
        gen !== required
      )
        out.push(extra('metadata.generateName', gen));
      if (c.field === 'metadata.name' && next?.field !== 'metadata.name' && name !== required) {
        out.push(extra('metadata.name', name));
        placedName = true;
      }
    }
    if (!placedName && name && name !== required) {
      const at = out.findIndex(
        (c) => !c.field?.startsWith('metadata.generateName') && !c.field?.startsWith('metadata.name'),
      );
      out.splice(at < 0 ? out.length : at, 0, extra('metadata.name', name));
    }
    errs.push(...out);
  }

  const specErrs = validateSpec(spec, 'spec');
  errs.push(...specErrs);
  if (old) {
    const os = old.spec;
    if (isEstablished(old)) {
      if (spec.scope !== os.scope)
        errs.push(fieldErrors.invalid('spec.scope', spec.scope, 'field is immutable'));
      if (spec.names.kind !== os.names?.kind)
        errs.push(fieldErrors.invalid('spec.names.kind', spec.names.kind ?? '', 'field is immutable'));
    }
    if (spec.group !== os.group)
      errs.push(fieldErrors.invalid('spec.group', spec.group, 'field is immutable'));
    if (spec.names.plural !== os.names?.plural)
      errs.push(fieldErrors.invalid('spec.names.plural', spec.names.plural ?? '', 'field is immutable'));
  }
  errs.push(...validateNames(crd.status?.acceptedNames, 'status.acceptedNames'));
  errs.push(...validateStoredVersions(storedVersionsFor(crd, old), spec.versions, 'status.storedVersions'));
  errs.push(...validateAPIApproval(crd, old));
  if (!(old?.spec?.preserveUnknownFields === true) && crd.spec.preserveUnknownFields === true)
    errs.push(
      fieldErrors.invalid(
        'spec.preserveUnknownFields',
        true,
        // kube's words, its misspelt extension name included.
        'cannot set to true, set x-preserve-unknown-fields to true in spec.versions[*].schema instead',
      ),
    );
  return errs;
}
export { MAX_SELECTABLE_FIELDS, setCustomResourceDefinitionDefaults } from './crd/internal.js';
export { validateDefaults } from './crd/schema-validation.js';
export { type ApiApprovalState, apiApprovalState, isProtectedCommunityGroup } from './crd/spec.js';
