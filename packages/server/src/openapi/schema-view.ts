/**
 * A compiled, walk-ready form of an OpenAPI schema, made for unknown-field detection.
 *
 * Strict field validation runs on every create and update, so the OpenAPI schema (with its
 * `$ref`s, `allOf`s and extensions) is compiled once into a graph of {@link SchemaNode}s that
 * answers "is this key known here, and what describes its value?" with one map lookup.
 *
 * Two flavours mirror the two decoders of kube-apiserver:
 * - **built-in** kinds are decoded into Go structs: a key is unknown when the struct has no such
 *   field; maps accept any key; raw fields (`RawExtension`, `FieldsV1`, `JSON`) and scalars
 *   with custom decoders (`IntOrString`, `Quantity`, `Time`) are never looked into.
 * - **custom resources** are pruned against their structural schema: every key the schema does
 *   not specify is unknown, unless `x-kubernetes-preserve-unknown-fields` keeps it;
 *   `apiVersion`, `kind` and `metadata` are implied at the root and in
 *   `x-kubernetes-embedded-resource` objects, and `metadata` is checked as an `ObjectMeta`.
 */
import { type BuiltinSpec, builtinSpec, type Obj } from './builtin.js';

/** One node of a compiled schema. Nodes are shared and may form cycles (through `$ref`). */
export interface SchemaNode {
  /** Declared properties. */
  props: Map<string, SchemaNode> | undefined;
  /** Schema of the values of undeclared keys (`additionalProperties`: a map). */
  additional: SchemaNode | undefined;
  /** Schema of array items. */
  items: SchemaNode | undefined;
  /** Undeclared keys are accepted as they are (free-form object, preserve-unknown-fields). */
  open: boolean;
  /** The value is decoded whole (a scalar, or a raw value): nothing inside it is checked. */
  opaque: boolean;
  /** `x-kubernetes-embedded-resource`: `apiVersion`, `kind` and `metadata` are implied. */
  embedded: boolean;
  /**
   * Built-in kinds: the list and map fields a Go struct round trip drops when empty
   * (`json:",omitempty"`), so that `labels: {}` or `ports: []` are not stored.
   */
  omitEmpty?: ReadonlySet<string>;
  /** A `resource.Quantity`: decoding re-renders it canonically (see `canonicalQuantity`). */
  quantity?: boolean;
}

/**
 * A schema ready for {@link findUnknownFields}; obtain one from `OpenApiService.schemaFor`,
 * {@link SchemaCompiler.definition} or {@link SchemaCompiler.customResource}.
 */
export class SchemaView {
  /** @internal Use {@link SchemaCompiler} to make views. */
  constructor(
    /** The root node of the compiled schema. */
    readonly root: SchemaNode,
    /** True for custom resources (pruning semantics), false for built-in kinds (Go structs). */
    readonly structural: boolean,
    /** The definition the view was compiled from, when it has a name. */
    readonly definition?: string,
    /**
     * The `ObjectMeta` node implied at the root and in embedded resources of a custom resource:
     * kube-apiserver reports unknown fields under it after the (sorted) pruned ones.
     */
    readonly objectMeta?: SchemaNode,
  ) {}
}

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
const SCALAR_TYPES = new Set(['string', 'integer', 'number', 'boolean']);

function newNode(): SchemaNode {
  return {
    props: undefined,
    additional: undefined,
    items: undefined,
    open: false,
    opaque: false,
    embedded: false,
  };
}

function asObj(value: unknown): Obj | undefined {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Obj) : undefined;
}

/** The definition name a schema points to, through `$ref` or a one-element `allOf`. */
export function refName(schema: Obj): string | undefined {
  let ref = schema.$ref;
  if (typeof ref !== 'string' && Array.isArray(schema.allOf) && schema.allOf.length === 1) {
    ref = asObj(schema.allOf[0])?.$ref;
  }
  if (typeof ref !== 'string') return undefined;
  const hash = ref.lastIndexOf('/');
  return hash >= 0 ? ref.slice(hash + 1) : ref;
}

/**
 * Compiles schemas into {@link SchemaView}s and caches the built-in definitions, which never
 * change. One compiler per server: it owns its cache (no module-level state).
 */
export class SchemaCompiler {
  private readonly spec: BuiltinSpec;
  private readonly defNodes = new Map<string, SchemaNode>();
  private readonly views = new Map<string, SchemaView>();

  constructor(spec: BuiltinSpec = builtinSpec()) {
    this.spec = spec;
  }

  /** The view of a built-in definition such as `io.k8s.api.apps.v1.Deployment`. */
  definition(name: string): SchemaView | undefined {
    const cached = this.views.get(name);
    if (cached) return cached;
    if (!this.spec.schemas.has(name)) return undefined;
    const view = new SchemaView(this.builtinRef(name), false, name);
    this.views.set(name, view);
    return view;
  }

  /**
   * The view of a custom resource's `openAPIV3Schema` (a structural schema). The root always
   * knows `apiVersion`, `kind` and `metadata` (checked as `ObjectMeta`), whatever the schema
   * says about them, as kube-apiserver does.
   */
  customResource(schema: Obj | undefined, definition?: string): SchemaView {
    const root = this.structural(schema);
    this.implyTypeMeta(root);
    return new SchemaView(root, true, definition, this.builtinRef(OBJECT_META));
  }

  private builtinRef(name: string): SchemaNode {
    const cached = this.defNodes.get(name);
    if (cached) return cached;
    const node = newNode();
    // Registered before it is filled, so that recursive definitions (JSONSchemaProps) resolve.
    this.defNodes.set(name, node);
    const schema = this.spec.schemas.get(name);
    if (schema) Object.assign(node, this.builtin(schema, name));
    else node.open = true;
    if (name === QUANTITY) node.quantity = true;
    return node;
  }

  private builtin(schema: Obj, definition?: string): SchemaNode {
    const ref = refName(schema);
    if (ref !== undefined) return this.builtinRef(ref);
    const node = newNode();
    const type = schema.type;
    if (
      (typeof type === 'string' && SCALAR_TYPES.has(type)) ||
      schema.format === 'int-or-string' ||
      schema['x-kubernetes-int-or-string'] === true
    ) {
      node.opaque = true;
      return node;
    }
    if (type === 'array') {
      const items = asObj(schema.items);
      node.items = items ? this.builtin(items) : undefined;
      if (!node.items) node.opaque = true;
      return node;
    }
    const props = asObj(schema.properties);
    if (props) {
      node.props = new Map();
      const required = new Set(Array.isArray(schema.required) ? schema.required : []);
      const keepEmpty = definition ? KEEPS_EMPTY[definition] : undefined;
      const omitEmpty = new Set<string>();
      for (const [key, sub] of Object.entries(props)) {
        const subSchema = asObj(sub);
        if (!subSchema) continue;
        node.props.set(key, this.builtin(subSchema));
        // A field the schema does not require is `omitempty` in the Go types, with few exceptions.
        if (isCollection(subSchema) && !required.has(key) && !keepEmpty?.includes(key)) omitEmpty.add(key);
      }
      if (omitEmpty.size > 0) node.omitEmpty = omitEmpty;
    }
    // Go structs flatten embedded structs; OpenAPI expresses the same with allOf.
    if (Array.isArray(schema.allOf)) {
      for (const part of schema.allOf) {
        const partSchema = asObj(part);
        if (!partSchema) continue;
        const partNode = this.builtin(partSchema);
        if (partNode.props) {
          node.props ??= new Map();
          for (const [key, value] of partNode.props) node.props.set(key, value);
        }
        if (partNode.omitEmpty) node.omitEmpty = new Set([...(node.omitEmpty ?? []), ...partNode.omitEmpty]);
        node.additional ??= partNode.additional;
        node.open ||= partNode.open;
      }
    }
    const additional = schema.additionalProperties;
    if (additional === true) node.open = true;
    else if (asObj(additional)) node.additional = this.builtin(additional as Obj);
    if (schema['x-kubernetes-preserve-unknown-fields'] === true) node.open = true;
    // An object type without declared fields is a raw value in Go (RawExtension, FieldsV1, JSON).
    if (!node.props && !node.additional && additional !== false) node.open = true;
    return node;
  }

  private structural(schema: Obj | undefined): SchemaNode {
    const node = newNode();
    if (!schema) return node;
    const props = asObj(schema.properties);
    if (props) {
      node.props = new Map();
      for (const [key, sub] of Object.entries(props)) node.props.set(key, this.structural(asObj(sub)));
    }
    const additional = schema.additionalProperties;
    // `additionalProperties: true` keeps the keys but, as the pruning algorithm does, nothing
    // below them (a schema-less value).
    if (additional === true) node.additional = CLOSED;
    else if (asObj(additional)) node.additional = this.structural(additional as Obj);
    const items = asObj(schema.items);
    if (items) node.items = this.structural(items);
    node.open = schema['x-kubernetes-preserve-unknown-fields'] === true;
    if (schema['x-kubernetes-embedded-resource'] === true) {
      node.embedded = true;
      this.implyTypeMeta(node);
    }
    return node;
  }

  /**
   * `apiVersion`, `kind` and `metadata` are implied at a resource's root and in embedded
   * resources; kube-apiserver checks `metadata` by decoding it as an `ObjectMeta`.
   */
  private implyTypeMeta(node: SchemaNode): void {
    const props = new Map(node.props);
    props.set('apiVersion', OPAQUE);
    props.set('kind', OPAQUE);
    props.set('metadata', this.builtinRef(OBJECT_META));
    node.props = props;
  }
}

/**
 * Optional list fields of built-in types declared without `omitempty` (`json:"rules"`): Go
 * encodes an empty one as `[]`, so it is kept.
 */
const KEEPS_EMPTY: Record<string, readonly string[] | undefined> = {
  'io.k8s.api.rbac.v1.Role': ['rules'],
  'io.k8s.api.rbac.v1.ClusterRole': ['rules'],
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionStatus': [
    'conditions',
    'storedVersions',
  ],
};

/** A list, or a map (`additionalProperties` without declared properties). */
function isCollection(schema: Obj): boolean {
  if (schema.type === 'array') return true;
  return schema.type === 'object' && asObj(schema.additionalProperties) !== undefined && !schema.properties;
}

/** A value decoded whole (apiVersion, kind). */
const OPAQUE: SchemaNode = { ...newNode(), opaque: true };

/**
 * What pruning applies where a structural schema says nothing (array items without `items`,
 * values under `additionalProperties: true`): every key of an object is unknown.
 */
export const CLOSED: SchemaNode = newNode();
