/**
 * Patch metadata: for each field of a kind, its `x-kubernetes-patch-strategy` and
 * `x-kubernetes-patch-merge-key`, read lazily from OpenAPI v3 schemas.
 *
 * kube-apiserver reads the same information from the Go struct tags (`patchStrategy`,
 * `patchMergeKey`) of the built-in types; the published OpenAPI carries those tags as
 * extensions, which is what {@link patchMetaForDefinition} walks.
 */
import { builtinSpec } from '../openapi/builtin.js';
import { getOwn, isObj, type Obj } from './json-value.js';

/**
 * How one field (or the root of a kind) is patched. Views are resolved lazily, so walking only
 * touches the part of the schema a patch actually reaches.
 */
export interface PatchMeta {
  /** `x-kubernetes-patch-strategy` of this field: `merge`, `retainKeys`, `merge,retainKeys`, `replace`. */
  readonly strategy?: string;
  /** `x-kubernetes-patch-merge-key` of this list field (`name` for containers). */
  readonly mergeKey?: string;
  /** `x-kubernetes-list-type` (`atomic`, `set`, `map`), for server-side apply. */
  readonly listType?: string;
  /** `x-kubernetes-list-map-keys` of a `map` list, for server-side apply. */
  readonly listMapKeys?: readonly string[];
  /**
   * The metadata of a property of this object, or of the values of this map
   * (`additionalProperties`: labels, `nodeSelector`, `data`); `undefined` when the schema does
   * not describe it.
   */
  field(name: string): PatchMeta | undefined;
  /** The metadata of the elements of this list, or `undefined` when it is not a list. */
  items(): PatchMeta | undefined;
}

/** Turns a `$ref` (such as `#/components/schemas/io.k8s.api.core.v1.Container`) into its schema. */
export type SchemaRefResolver = (ref: string) => unknown;

/** Local references of OpenAPI v3 (`#/components/schemas/…`) and v2 (`#/definitions/…`). */
const REF_PREFIXES = ['#/components/schemas/', '#/definitions/'];

/** How many `$ref`/`allOf` hops are followed before a schema is declared unresolvable. */
const MAX_REF_DEPTH = 64;

/** A property to add to a definition, or extensions to lay over one it has. */
type Overlay = Record<string, Record<string, Obj>>;

/**
 * Struct tags of built-in types that the bundled spec lacks, checked against the Go types:
 * its `$ref`-only properties lost their sibling extensions in the v2 → v3 conversion
 * (`DeploymentSpec.strategy` is `patchStrategy:"retainKeys"`), and it predates fields added
 * since Kubernetes 1.28. Overlays only add what is missing.
 */
const BUILTIN_OVERLAY: Overlay = {
  'io.k8s.api.apps.v1.DeploymentSpec': {
    strategy: { 'x-kubernetes-patch-strategy': 'retainKeys' },
  },
  'io.k8s.api.core.v1.PodStatus': {
    hostIPs: {
      type: 'array',
      items: { type: 'object' },
      'x-kubernetes-patch-strategy': 'merge',
      'x-kubernetes-patch-merge-key': 'ip',
    },
    resourceClaimStatuses: {
      type: 'array',
      items: { type: 'object' },
      'x-kubernetes-patch-strategy': 'merge,retainKeys',
      'x-kubernetes-patch-merge-key': 'name',
    },
  },
};

/** Resolution shared by every view made from one document. */
class SchemaContext {
  /** The definition name each resolved schema object came from, for overlays. */
  private readonly names = new WeakMap<Obj, string>();

  constructor(
    private readonly resolveRef: SchemaRefResolver,
    private readonly overlay: Overlay = {},
  ) {}

  /** Follows `$ref` and single-schema `allOf` down to the schema that describes the value. */
  structural(schema: Obj): Obj {
    let current = schema;
    for (let depth = 0; depth < MAX_REF_DEPTH; depth++) {
      const ref = getOwn(current, '$ref');
      if (typeof ref === 'string') {
        const target = this.resolveRef(ref);
        if (!isObj(target)) return {};
        const name = definitionName(ref);
        if (name !== undefined && !this.names.has(target)) this.names.set(target, name);
        current = target;
        continue;
      }
      const allOf = getOwn(current, 'allOf');
      if (Array.isArray(allOf) && allOf.length === 1 && isObj(allOf[0]) && !hasShape(current)) {
        current = allOf[0];
        continue;
      }
      return current;
    }
    return {};
  }

  /** The schema of property `name` of a structural schema, with its overlay if any. */
  property(structural: Obj, name: string): Obj | undefined {
    const properties = getOwn(structural, 'properties');
    const declared = isObj(properties) ? getOwn(properties, name) : undefined;
    const definition = this.names.get(structural);
    const extra = definition === undefined ? undefined : this.overlay[definition]?.[name];
    if (extra === undefined) return isObj(declared) ? declared : undefined;
    if (!isObj(declared)) return extra;
    const merged: Obj = { ...declared };
    for (const [k, v] of Object.entries(extra)) if (!Object.hasOwn(merged, k)) merged[k] = v;
    return merged;
  }
}

function definitionName(ref: string): string | undefined {
  for (const prefix of REF_PREFIXES) if (ref.startsWith(prefix)) return ref.slice(prefix.length);
  return undefined;
}

/** True when a schema describes its value itself rather than only through `allOf`. */
function hasShape(schema: Obj): boolean {
  return ['properties', 'additionalProperties', 'items', 'type'].some((k) => getOwn(schema, k) !== undefined);
}

function stringExtension(schema: Obj, structural: Obj, name: string): string | undefined {
  const own = getOwn(schema, name);
  if (typeof own === 'string') return own;
  const resolved = getOwn(structural, name);
  return typeof resolved === 'string' ? resolved : undefined;
}

/** A lazily resolved view of one schema node. */
class SchemaPatchMeta implements PatchMeta {
  readonly strategy?: string;
  readonly mergeKey?: string;
  readonly listType?: string;
  readonly listMapKeys?: readonly string[];
  private readonly resolved: Obj;
  private readonly fields = new Map<string, PatchMeta | undefined>();
  private itemsMeta: PatchMeta | undefined | null = null;

  constructor(
    private readonly context: SchemaContext,
    schema: Obj,
  ) {
    this.resolved = context.structural(schema);
    // Extensions sit on the property (next to its `$ref`, or on an `allOf` wrapper).
    const strategy = stringExtension(schema, this.resolved, 'x-kubernetes-patch-strategy');
    const mergeKey = stringExtension(schema, this.resolved, 'x-kubernetes-patch-merge-key');
    const listType = stringExtension(schema, this.resolved, 'x-kubernetes-list-type');
    const keys =
      getOwn(schema, 'x-kubernetes-list-map-keys') ?? getOwn(this.resolved, 'x-kubernetes-list-map-keys');
    if (strategy !== undefined) this.strategy = strategy;
    if (mergeKey !== undefined) this.mergeKey = mergeKey;
    if (listType !== undefined) this.listType = listType;
    if (Array.isArray(keys)) this.listMapKeys = keys.filter((k): k is string => typeof k === 'string');
  }

  field(name: string): PatchMeta | undefined {
    if (this.fields.has(name)) return this.fields.get(name);
    let meta: PatchMeta | undefined;
    const property = this.context.property(this.resolved, name);
    if (property !== undefined) {
      meta = new SchemaPatchMeta(this.context, property);
    } else {
      const additional = getOwn(this.resolved, 'additionalProperties');
      if (isObj(additional)) meta = new SchemaPatchMeta(this.context, additional);
    }
    this.fields.set(name, meta);
    return meta;
  }

  items(): PatchMeta | undefined {
    if (this.itemsMeta === null) {
      const items = getOwn(this.resolved, 'items');
      this.itemsMeta = isObj(items) ? new SchemaPatchMeta(this.context, items) : undefined;
    }
    return this.itemsMeta;
  }
}

/**
 * Builds a {@link PatchMeta} over any OpenAPI v3 (or v2) schema, such as a
 * CustomResourceDefinition's `openAPIV3Schema`.
 *
 * @param schema - the schema of the root value.
 * @param resolveRef - looks up `$ref` targets; without it references resolve to nothing.
 * @returns `undefined` when `schema` is not a schema object.
 *
 * @example
 * ```ts
 * const meta = patchMetaFromSchema(crd.spec.versions[0].schema.openAPIV3Schema);
 * meta?.field('spec')?.field('ports')?.listMapKeys; // ['port', 'protocol']
 * ```
 */
export function patchMetaFromSchema(
  schema: unknown,
  resolveRef: SchemaRefResolver = () => undefined,
): PatchMeta | undefined {
  return isObj(schema) ? new SchemaPatchMeta(new SchemaContext(resolveRef), schema) : undefined;
}

// Views of the built-in definitions are immutable and derived from a file that never changes
// at run time, so one process-wide memo is safe and spares every request the walk.
let builtinContext: SchemaContext | undefined;
const builtinViews = new Map<string, PatchMeta | undefined>();

function builtins(): SchemaContext {
  if (builtinContext === undefined) {
    const { schemas } = builtinSpec();
    builtinContext = new SchemaContext((ref) => {
      const name = definitionName(ref);
      return name === undefined ? undefined : schemas.get(name);
    }, BUILTIN_OVERLAY);
  }
  return builtinContext;
}

/**
 * The patch metadata of a built-in definition, from the bundled OpenAPI schemas.
 *
 * @param definition - an OpenAPI definition name such as `io.k8s.api.apps.v1.Deployment`.
 * @returns `undefined` for a definition that is not bundled.
 *
 * @example
 * ```ts
 * const containers = patchMetaForDefinition('io.k8s.api.apps.v1.Deployment')
 *   ?.field('spec')?.field('template')?.field('spec')?.field('containers');
 * containers?.strategy; // 'merge'
 * containers?.mergeKey; // 'name'
 * ```
 */
export function patchMetaForDefinition(definition: string): PatchMeta | undefined {
  if (builtinViews.has(definition)) return builtinViews.get(definition);
  const context = builtins();
  const meta = builtinSpec().schemas.has(definition)
    ? new SchemaPatchMeta(context, { $ref: `${REF_PREFIXES[0]}${definition}` })
    : undefined;
  builtinViews.set(definition, meta);
  return meta;
}
