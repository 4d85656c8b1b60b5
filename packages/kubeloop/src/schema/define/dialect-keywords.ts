import type { JsonObject } from '../../api/object.js';

/** A JSON object (kubeloop/api's `JsonObject`). */
export type Obj = JsonObject;

export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export const TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);

/** Keywords copied as they are (after their values are checked or converted below). */
export const SCALAR_KEYWORDS = new Set([
  'description',
  'title',
  'format',
  'pattern',
  'maxLength',
  'minLength',
  'maxItems',
  'minItems',
  'maxProperties',
  'minProperties',
  'multipleOf',
  'maximum',
  'minimum',
  'example',
  'externalDocs',
  'default',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-list-type',
  'x-kubernetes-map-type',
]);

/** Annotations with no effect on validation, which Kubernetes has no field for: dropped. */
export const DROPPED = new Set([
  '$id',
  '$schema',
  '$comment',
  '$anchor',
  'examples',
  'readOnly',
  'writeOnly',
  'deprecated',
]);

const CONDITIONAL = 'Kubernetes does not support if/then/else: use a CEL rule (x-kubernetes-validations)';

/** What Kubernetes refuses, with what to write instead. */
export const REFUSED: Record<string, string> = {
  $ref: 'Kubernetes does not resolve references ($ref): inline the schema (Type.Ref, Type.Cyclic and Type.Module cannot be used in a CRD)',
  $defs: 'Kubernetes does not support schema definitions ($defs): inline the schema',
  definitions: 'Kubernetes does not support schema definitions: inline the schema',
  $dynamicRef: 'Kubernetes does not resolve references ($dynamicRef)',
  $recursiveRef: 'Kubernetes does not resolve references ($recursiveRef)',
  id: 'Kubernetes does not support id',
  dependencies:
    'Kubernetes does not support dependencies: use a CEL rule, e.g. { rule: "!has(self.a) || has(self.b)" }',
  dependentRequired:
    'Kubernetes does not support dependentRequired: use a CEL rule, e.g. { rule: "!has(self.a) || has(self.b)" }',
  dependentSchemas: 'Kubernetes does not support dependentSchemas: use a CEL rule (x-kubernetes-validations)',
  if: CONDITIONAL,
  // biome-ignore lint/suspicious/noThenProperty: the JSON Schema keyword, in a table of keywords.
  then: CONDITIONAL,
  else: CONDITIONAL,
  prefixItems: 'Kubernetes does not support tuples: use Type.Array with one item schema',
  additionalItems:
    'Kubernetes does not support tuples (additionalItems): use Type.Array with one item schema',
  unevaluatedItems: 'Kubernetes does not support unevaluatedItems',
  unevaluatedProperties:
    'Kubernetes does not support unevaluatedProperties: unknown fields are pruned, or kept with x-kubernetes-preserve-unknown-fields',
  contains:
    'Kubernetes does not support contains: use a CEL rule, e.g. { rule: "self.exists(x, x == \'a\')" }',
  minContains: 'Kubernetes does not support minContains: use a CEL rule',
  maxContains: 'Kubernetes does not support maxContains: use a CEL rule',
  propertyNames:
    'Kubernetes does not support propertyNames: use a CEL rule, e.g. { rule: "self.all(k, k.matches(\'^[a-z]+$\'))" }',
  contentEncoding: 'Kubernetes does not support contentEncoding: use format "byte" for base64 data',
  contentMediaType: 'Kubernetes does not support contentMediaType',
  contentSchema: 'Kubernetes does not support contentSchema',
};

/** Record keys of TypeBox that mean "any string key". */
export const ANY_KEY_PATTERNS = new Set(['^.*$', '^(.*)$', '.*', '^.+$']);

/** Keys a structural schema's skeleton owns (forbidden inside anyOf/allOf/oneOf/not). */
const SKELETON_KEYS = new Set([
  'type',
  'nullable',
  'description',
  'title',
  'default',
  'externalDocs',
  'example',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-list-type',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
]);

export function INT_OR_STRING_ANY_OF(): Obj[] {
  return [{ type: 'integer' }, { type: 'string' }];
}

export function isIntOrStringAnyOf(v: unknown[]): boolean {
  return (
    v.length === 2 &&
    isObj(v[0]) &&
    isObj(v[1]) &&
    Object.keys(v[0]).length === 1 &&
    Object.keys(v[1]).length === 1 &&
    v[0].type === 'integer' &&
    v[1].type === 'string'
  );
}

export function join(path: string, name: string): string {
  const seg = /^[A-Za-z_$][\w$-]*$/.test(name) ? name : `[${JSON.stringify(name)}]`;
  if (!path) return seg;
  return seg.startsWith('[') ? `${path}${seg}` : `${path}.${seg}`;
}

export function typeOfValues(values: unknown[]): string | undefined {
  if (values.length === 0) return undefined;
  if (values.every((v) => typeof v === 'string')) return 'string';
  if (values.every((v) => typeof v === 'boolean')) return 'boolean';
  if (values.every((v) => typeof v === 'number' && Number.isInteger(v))) return 'integer';
  if (values.every((v) => typeof v === 'number')) return 'number';
  if (values.every((v) => isObj(v))) return 'object';
  if (values.every((v) => Array.isArray(v))) return 'array';
  return undefined;
}

/**
 * The node with a member's value validations merged in (a copy), or undefined when a keyword
 * would be specified twice with different values.
 */
export function mergeResidue(node: Obj, residue: Obj): Obj | undefined {
  const out: Obj = { ...node };
  for (const [k, v] of Object.entries(residue)) {
    const prev = out[k];
    if (k === 'required')
      out.required = [...new Set([...((prev as string[] | undefined) ?? []), ...(v as string[])])];
    else if (k === 'properties' && isObj(prev) && isObj(v)) {
      const props: Obj = { ...prev };
      for (const [name, r] of Object.entries(v)) {
        const target = props[name];
        const m = isObj(target) && isObj(r) ? mergeResidue(target, r) : undefined;
        if (!m) return undefined;
        props[name] = m;
      }
      out.properties = props;
    } else if ((k === 'items' || k === 'additionalProperties') && isObj(prev) && isObj(v)) {
      const m = mergeResidue(prev, v);
      if (!m) return undefined;
      out[k] = m;
    } else if (prev === undefined) out[k] = v;
    else if (!jsonEqual(prev, v)) return undefined;
  }
  return reorder(out);
}

/** The structural part of a converted schema: what a union's alternatives must share. */
export function skeletonOf(s: Obj): Obj {
  const out: Obj = {};
  for (const [k, v] of Object.entries(s)) {
    if (SKELETON_KEYS.has(k)) out[k] = v;
    else if (k === 'properties')
      out.properties = Object.fromEntries(
        Object.entries(v as Obj).map(([n, p]) => [n, skeletonOf(p as Obj)]),
      );
    else if (k === 'items' || k === 'additionalProperties') out[k] = isObj(v) ? skeletonOf(v) : v;
  }
  return out;
}

/** The value validations of a converted schema: what may differ between a union's alternatives. */
export function residueOf(s: Obj): Obj {
  const out: Obj = {};
  for (const [k, v] of Object.entries(s)) {
    if (SKELETON_KEYS.has(k)) continue;
    if (k === 'properties') {
      const props: Obj = {};
      for (const [n, p] of Object.entries(v as Obj)) {
        const r = residueOf(p as Obj);
        if (Object.keys(r).length > 0) props[n] = r;
      }
      if (Object.keys(props).length > 0) out.properties = props;
    } else if (k === 'items' || k === 'additionalProperties') {
      if (isObj(v)) {
        const r = residueOf(v);
        if (Object.keys(r).length > 0) out[k] = r;
      }
    } else out[k] = v;
  }
  return out;
}

const ORDER = [
  'description',
  'type',
  'format',
  'title',
  'default',
  'enum',
  'nullable',
  'required',
  'properties',
  'additionalProperties',
  'items',
];

/** A stable, readable key order (what people see in `config/crd/bases/*.yaml`). */
export function reorder(s: Obj): Obj {
  const out: Obj = {};
  for (const k of ORDER) if (s[k] !== undefined) out[k] = s[k];
  for (const [k, v] of Object.entries(s)) if (!(k in out)) out[k] = v;
  return out;
}

export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a))
    return Array.isArray(b) && a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (isObj(a) && isObj(b)) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return ka.length === kb.length && ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
  }
  return false;
}

/**
 * Rewrites a TypeBox (JSON Schema) schema into Kubernetes' structural OpenAPI v3 dialect, or
 * throws a {@link SchemaDialectError} listing every field Kubernetes would refuse.
 *
 * @example
 * ```ts
 * toKubernetesSchema(Type.Object({ mode: Type.Union([Type.Literal('a'), Type.Literal('b')]) }));
 * // { type: 'object', required: ['mode'], properties: { mode: { type: 'string', enum: ['a', 'b'] } } }
 * ```
 */
