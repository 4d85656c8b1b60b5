/**
 * TypeMeta and ObjectMeta of embedded resources (`x-kubernetes-embedded-resource`), as
 * apiextensions' `schema/objectmeta.Validate` checks them.
 */
import type { StatusCause } from '../api/status.js';
import { fieldErrors, isDNS1035Label, validateObjectMeta } from '../api/validation.js';
import type { Structural } from './structural.js';
import { goBadValue, isObj } from './util.js';

function validateEmbeddedResource(path: string, x: Record<string, unknown>, errs: StatusCause[]): void {
  const at = (c: string) => (path ? `${path}.${c}` : c);
  if (!Object.hasOwn(x, 'apiVersion')) errs.push(fieldErrors.required(at('apiVersion'), 'must not be empty'));
  if (!Object.hasOwn(x, 'kind')) errs.push(fieldErrors.required(at('kind'), 'must not be empty'));
  for (const [k, v] of Object.entries(x)) {
    if (k === 'apiVersion') {
      if (typeof v !== 'string')
        errs.push(fieldErrors.invalid(at('apiVersion'), goBadValue(v), 'must be a string'));
      else if (v.length === 0) errs.push(fieldErrors.invalid(at('apiVersion'), v, 'must not be empty'));
      else if (v.split('/').length > 2)
        errs.push(fieldErrors.invalid(at('apiVersion'), v, `unexpected GroupVersion string: ${v}`));
    } else if (k === 'kind') {
      if (typeof v !== 'string')
        errs.push(fieldErrors.invalid(at('kind'), goBadValue(v), 'must be a string'));
      else if (v.length === 0) errs.push(fieldErrors.invalid(at('kind'), v, 'must not be empty'));
      else {
        const e = isDNS1035Label(v.toLowerCase());
        if (e.length > 0)
          errs.push(
            fieldErrors.invalid(
              at('kind'),
              v,
              `may have mixed case, but should otherwise match: ${e.join(',')}`,
            ),
          );
      }
    } else if (k === 'metadata') {
      if (v !== null && !isObj(v)) {
        // GetObjectMeta round-trips metadata through JSON into metav1.ObjectMeta.
        const jsonType = Array.isArray(v) ? 'array' : typeof v === 'boolean' ? 'bool' : typeof v;
        errs.push(
          fieldErrors.invalid(
            at('metadata'),
            goBadValue(v),
            `json: cannot unmarshal ${jsonType} into Go value of type v1.ObjectMeta`,
          ),
        );
        continue;
      }
      const meta: Record<string, unknown> = { ...(v ?? {}) };
      // kube sets a placeholder so that a missing name is not reported for embedded objects.
      if (typeof meta.name !== 'string' || meta.name.length === 0) meta.name = 'fakename';
      const namespaced = typeof meta.namespace === 'string' && meta.namespace.length > 0;
      for (const c of validateObjectMeta(meta, {
        namespaced,
        nameValidation: 'path-segment',
        create: false,
      })) {
        errs.push({
          ...c,
          ...(c.field !== undefined && { field: c.field.replace(/^metadata/, at('metadata')) }),
        });
      }
    }
  }
}

const withEmbedded = new WeakMap<Structural, boolean>();

/** Whether a schema node or anything below it is an embedded resource (memoized per schema node). */
export function hasEmbeddedResource(s: Structural): boolean {
  let r = withEmbedded.get(s);
  if (r === undefined) {
    r =
      s.embeddedResource ||
      (s.items !== undefined && hasEmbeddedResource(s.items)) ||
      Object.values(s.properties ?? {}).some(hasEmbeddedResource) ||
      (s.additionalProperties?.schema !== undefined && hasEmbeddedResource(s.additionalProperties.schema));
    withEmbedded.set(s, r);
  }
  return r;
}

function walk(path: string, x: unknown, s: Structural | undefined, errs: StatusCause[]): void {
  if (!s || !hasEmbeddedResource(s)) return;
  if (isObj(x)) {
    if (s.embeddedResource) validateEmbeddedResource(path, x, errs);
    for (const [k, v] of Object.entries(x)) {
      const prop = s.properties?.[k];
      if (prop) walk(path ? `${path}.${k}` : k, v, prop, errs);
      else if (s.additionalProperties) walk(`${path}[${k}]`, v, s.additionalProperties.schema, errs);
    }
  } else if (Array.isArray(x)) {
    x.forEach((v, i) => {
      walk(`${path}[${i}]`, v, s.items, errs);
    });
  }
}

/**
 * Validates apiVersion, kind and metadata of every embedded resource in `obj` (and of `obj`
 * itself when `isResourceRoot`), like apiextensions' `objectmeta.Validate`.
 *
 * @example
 * ```ts
 * validateEmbeddedObjectMeta(structural, { spec: { template: { kind: 'Pod' } } });
 * // [{ field: 'spec.template.apiVersion', message: 'Required value: must not be empty', … }]
 * ```
 */
export function validateEmbeddedObjectMeta(
  s: Structural,
  obj: unknown,
  isResourceRoot = false,
  path = '',
): StatusCause[] {
  const errs: StatusCause[] = [];
  const root = isResourceRoot && !s.embeddedResource ? { ...s, embeddedResource: true } : s;
  walk(path, obj, root, errs);
  return errs;
}
