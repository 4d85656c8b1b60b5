/**
 * The type information server-side apply merges with, as structured-merge-diff's `schema`
 * package models it and as kube-openapi's `schemaconv` derives it from OpenAPI: maps (structs
 * with declared fields, and/or maps of undeclared keys) that are granular or atomic, lists that
 * are atomic or associative (sets, or maps keyed by some fields), and scalars.
 *
 * Built-in kinds come from the bundled OpenAPI definitions: a list with
 * `x-kubernetes-list-type` follows it, one without but with `x-kubernetes-patch-strategy: merge`
 * is associative (keyed by its patch merge key, a set without one), any other list is atomic.
 * Custom resources come from their CRD's schema, with `metadata` typed as `ObjectMeta`.
 */
import type { JSONSchemaProps } from 'kubeloop/schema';
import { builtinSpec } from '../openapi/builtin.js';
import { isObj, type Obj } from './value.js';

/** The kind of a scalar: `untyped` accepts any scalar (quantities, int-or-string, times). */
export type ScalarKind = 'numeric' | 'string' | 'boolean' | 'untyped';

/** A lazily resolved type (types are recursive: JSONSchemaProps contains JSONSchemaProps). */
export type TypeRef = () => Atom;

/** A map or struct. */
export interface MapType {
  /** `x-kubernetes-map-type: atomic`: owned and replaced as a whole. */
  readonly atomic: boolean;
  /** The type of a declared field (struct field). */
  field(name: string): TypeRef | undefined;
  /** The schema default of a declared field (list-map keys may rely on one). */
  fieldDefault(name: string): unknown;
  /** The type of undeclared keys; undefined when the schema allows none. */
  readonly elementType: TypeRef | undefined;
}

/** A list. */
export interface ListType {
  /** Atomic lists are owned and replaced as a whole; associative ones item by item. */
  readonly atomic: boolean;
  /** Key fields of a list-map (`x-kubernetes-list-map-keys`); empty for a set. */
  readonly keys: readonly string[];
  readonly elementType: TypeRef;
}

/**
 * What a value may be: a scalar, a list and/or a map. Untyped schemas allow all three; the
 * value decides which applies.
 */
export interface Atom {
  readonly scalar?: ScalarKind;
  readonly list?: ListType;
  readonly map?: MapType;
}

const memo = (f: () => Atom): TypeRef => {
  let v: Atom | undefined;
  return () => {
    v ??= f();
    return v;
  };
};

/** `__untyped_atomic_`: any value, owned as a whole. */
export const UNTYPED_ATOMIC: Atom = {
  scalar: 'untyped',
  list: { atomic: true, keys: [], elementType: () => UNTYPED_ATOMIC },
  map: {
    atomic: true,
    field: () => undefined,
    fieldDefault: () => undefined,
    elementType: () => UNTYPED_ATOMIC,
  },
};

/** `__untyped_deduced_`: maps are granular (key by key), lists atomic, scalars leaves. */
export const DEDUCED: Atom = {
  scalar: 'untyped',
  list: { atomic: true, keys: [], elementType: () => UNTYPED_ATOMIC },
  map: { atomic: false, field: () => undefined, fieldDefault: () => undefined, elementType: () => DEDUCED },
};

const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
const RAW_EXTENSION = 'io.k8s.apimachinery.pkg.runtime.RawExtension';
const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

/**
 * Schema defaults of built-in list-map keys: Kubernetes' own OpenAPI carries them
 * (`+default="TCP"`), the bundled definitions do not.
 */
const BUILTIN_FIELD_DEFAULTS: Record<string, Record<string, unknown>> = {
  'io.k8s.api.core.v1.ContainerPort': { protocol: 'TCP' },
  'io.k8s.api.core.v1.ServicePort': { protocol: 'TCP' },
};

/** Resolves a `$ref` target by definition name. */
type Resolver = (name: string) => Atom | undefined;

function refName(schema: Obj): string | undefined {
  let ref = schema.$ref;
  const allOf = schema.allOf;
  if (typeof ref !== 'string' && Array.isArray(allOf) && allOf.length === 1 && isObj(allOf[0]))
    ref = allOf[0].$ref;
  if (typeof ref !== 'string') return undefined;
  const slash = ref.lastIndexOf('/');
  return ref.slice(slash + 1) || undefined;
}

function mapAtomic(ext: unknown): boolean | undefined {
  if (ext === 'atomic') return true;
  if (ext === 'granular') return false;
  return undefined;
}

/** kube-openapi's `schemaconv` over one OpenAPI schema node. */
class Converter {
  constructor(
    private readonly resolve: Resolver,
    private readonly definition?: string,
  ) {}

  parse(m: Obj, preserveUnknown: boolean): Atom {
    const preserve = preserveUnknown || m['x-kubernetes-preserve-unknown-fields'] === true;
    const type = typeof m.type === 'string' ? m.type : '';
    switch (type) {
      case '':
        return { scalar: 'untyped', list: this.parseList(m, preserve), map: this.parseObject(m, preserve) };
      case 'object':
        return { map: this.parseObject(m, preserve) };
      case 'array':
        return { list: this.parseList(m, preserve) };
      case 'integer':
      case 'number':
        return { scalar: 'numeric' };
      case 'boolean':
        return { scalar: 'boolean' };
      case 'string':
        return {
          scalar: m.format === undefined || m.format === '' || m.format === 'byte' ? 'string' : 'untyped',
        };
      default:
        return { scalar: 'untyped' };
    }
  }

  ref(m: Obj, preserveUnknown: boolean): TypeRef {
    const name = refName(m);
    if (name !== undefined) {
      const atomic = mapAtomic(m['x-kubernetes-map-type']);
      return memo(() => {
        const target = this.resolve(name) ?? UNTYPED_ATOMIC;
        if (atomic === undefined || !target.map || target.map.atomic === atomic) return target;
        return { ...target, map: { ...target.map, atomic } };
      });
    }
    return memo(() => this.parse(m, preserveUnknown));
  }

  private parseObject(s: Obj, preserve: boolean): MapType {
    const properties = isObj(s.properties) ? s.properties : {};
    const refs = new Map<string, TypeRef>();
    const defaults = this.definition ? BUILTIN_FIELD_DEFAULTS[this.definition] : undefined;
    const field = (name: string): TypeRef | undefined => {
      if (!Object.hasOwn(properties, name)) return undefined;
      let r = refs.get(name);
      if (!r) {
        const p = properties[name];
        r = isObj(p) ? this.ref(p, preserve) : () => UNTYPED_ATOMIC;
        refs.set(name, r);
      }
      return r;
    };
    const fieldDefault = (name: string): unknown => {
      const p = Object.hasOwn(properties, name) ? properties[name] : undefined;
      if (isObj(p) && p.default !== undefined) return p.default;
      return defaults?.[name];
    };
    const ap = s.additionalProperties;
    let elementType: TypeRef | undefined;
    if (ap === undefined || ap === null) {
      elementType = preserve || Object.keys(properties).length === 0 ? () => DEDUCED : undefined;
    } else if (isObj(ap)) {
      elementType = this.ref(ap, preserve);
    } else if (ap === true) {
      elementType = () => DEDUCED;
    }
    return { atomic: mapAtomic(s['x-kubernetes-map-type']) ?? false, field, fieldDefault, elementType };
  }

  private parseList(s: Obj, preserve: boolean): ListType {
    let atomic = true;
    let keys: string[] = [];
    const listType = s['x-kubernetes-list-type'];
    if (listType !== undefined) {
      if (listType === 'set') atomic = false;
      else if (listType === 'map') {
        atomic = false;
        const k = s['x-kubernetes-list-map-keys'];
        keys = Array.isArray(k) ? k.filter((x): x is string => typeof x === 'string') : [];
      }
    } else {
      const strategy = s['x-kubernetes-patch-strategy'];
      if (strategy === 'merge' || strategy === 'merge,retainKeys') {
        atomic = false;
        const key = s['x-kubernetes-patch-merge-key'];
        if (typeof key === 'string') keys = [key];
      }
    }
    const items = s.items;
    const elementType = isObj(items) ? this.ref(items, preserve) : () => UNTYPED_ATOMIC;
    return { atomic, keys, elementType };
  }
}

const builtinAtoms = new Map<string, Atom | undefined>();

/** The type of a built-in OpenAPI definition (`io.k8s.api.apps.v1.Deployment`). */
export function builtinAtom(definition: string): Atom | undefined {
  if (builtinAtoms.has(definition)) return builtinAtoms.get(definition);
  let atom: Atom | undefined;
  if (definition === QUANTITY || definition === RAW_EXTENSION) atom = { scalar: 'untyped' };
  else {
    const schema = builtinSpec().schemas.get(definition);
    if (schema) {
      // Recursive definitions (JSONSchemaProps) resolve lazily through the memo below.
      builtinAtoms.set(definition, undefined);
      atom = new Converter(builtinAtom, definition).parse(schema, false);
    }
  }
  builtinAtoms.set(definition, atom);
  return atom;
}

const customAtoms = new WeakMap<object, Atom>();

/**
 * The type of a custom resource from its version's schema: the schema's own fields, with
 * `metadata` as `ObjectMeta` and `apiVersion`/`kind` as strings, as the CRD's published OpenAPI has them.
 */
export function customResourceAtom(schema: JSONSchemaProps): Atom {
  const cached = customAtoms.get(schema);
  if (cached) return cached;
  const s = schema as unknown as Obj;
  const properties = isObj(s.properties) ? s.properties : {};
  const root: Obj = {
    ...s,
    type: 'object',
    properties: {
      ...properties,
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: { $ref: `#/definitions/${OBJECT_META}` },
    },
  };
  const atom = new Converter((name) => builtinAtom(name)).parse(root, false);
  customAtoms.set(schema, atom);
  return atom;
}

/**
 * The type of any OpenAPI v3 schema, `$ref`s resolving to built-in definitions.
 *
 * @example
 * ```ts
 * const atom = openApiAtom({ type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } });
 * ```
 */
export function openApiAtom(schema: Obj): Atom {
  return new Converter(builtinAtom).parse(schema, false);
}
