/**
 * Builds the OpenAPI documents kube-apiserver publishes for the resources the server serves:
 * one OpenAPI v3 document per group-version (plus the small discovery ones), and the single
 * OpenAPI v2 (Swagger 2.0) document of everything.
 */
import { builtinSpec, type Obj, V3_REF_PREFIX } from './builtin.js';
import {
  COMMON_DEFINITIONS,
  discoveryPaths,
  groupVersionPaths,
  type OpenApiResource,
  type ResolvedResource,
  SCALE_DEFINITION,
} from './paths.js';
import { refName } from './schema-view.js';

/** Options of the generated documents. */
export interface DocumentOptions {
  /** `info.version`: the Kubernetes version the server reports (`v1.32.0`). */
  version: string;
}

/** Everything the OpenAPI service publishes, built from one snapshot of the served resources. */
export interface BuiltDocuments {
  /** OpenAPI v3 documents by discovery key: `api/v1`, `apis/apps/v1`, `api`, `apis`, `apis/apps`, `version`. */
  v3: Map<string, Obj>;
  /** Every path of every v3 document, for the v2 document. */
  paths: Obj;
  /** The served resources with their definitions resolved. */
  resources: ResolvedResource[];
  /** Every definition published, built-in and custom, by name. */
  definitions: Map<string, Obj>;
  /** Custom resource definitions as published in v2 (what v2 cannot express taken out). */
  v2Overrides: Map<string, Obj>;
}

const API_VERSION_DESCRIPTION =
  'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources';
const KIND_DESCRIPTION =
  'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';
const METADATA_DESCRIPTION =
  "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";
const LIST_METADATA_DESCRIPTION =
  'Standard list metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

const SECURITY_SCHEME = {
  BearerToken: {
    type: 'apiKey',
    description: 'Bearer Token authentication',
    name: 'authorization',
    in: 'header',
  },
};

/**
 * The definition name kube-apiserver gives a custom resource: the group reversed, then the
 * version and kind (`stable.example.com/v1/CronTab` → `com.example.stable.v1.CronTab`).
 */
export function customResourceDefinitionName(group: string, version: string, kind: string): string {
  return [...group.split('.').reverse(), version, kind].join('.');
}

/** The published schema of a custom resource, as the CRD OpenAPI builder completes it. */
function customResourceSchema(res: OpenApiResource, userSchema: Obj | undefined): Obj {
  const schema: Obj = structuredClone(userSchema ?? {});
  const properties: Obj = { ...((schema.properties as Obj | undefined) ?? {}) };
  properties.apiVersion = { description: API_VERSION_DESCRIPTION, type: 'string' };
  properties.kind = { description: KIND_DESCRIPTION, type: 'string' };
  properties.metadata = {
    allOf: [{ $ref: `${V3_REF_PREFIX}io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta` }],
    description: METADATA_DESCRIPTION,
  };
  schema.properties = properties;
  schema.type ??= 'object';
  schema['x-kubernetes-group-version-kind'] = [{ group: res.group, kind: res.kind, version: res.version }];
  return schema;
}

function listSchema(
  group: string,
  version: string,
  kind: string,
  plural: string,
  itemDefinition: string,
): Obj {
  return {
    description: `${kind}List is a list of ${kind}`,
    properties: {
      apiVersion: { description: API_VERSION_DESCRIPTION, type: 'string' },
      items: {
        description: `List of ${plural}. More info: https://git.k8s.io/community/contributors/devel/api-conventions.md`,
        items: { $ref: V3_REF_PREFIX + itemDefinition },
        type: 'array',
      },
      kind: { description: KIND_DESCRIPTION, type: 'string' },
      metadata: {
        allOf: [{ $ref: `${V3_REF_PREFIX}io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta` }],
        description: LIST_METADATA_DESCRIPTION,
      },
    },
    required: ['items'],
    type: 'object',
    'x-kubernetes-group-version-kind': [{ group, kind: `${kind}List`, version }],
  };
}

/** Adds `name` and every definition it refers to (transitively) to `out`. */
function collectDefinitions(name: string, all: ReadonlyMap<string, Obj>, out: Map<string, Obj>): void {
  const pending = [name];
  while (pending.length > 0) {
    const next = pending.pop() as string;
    if (out.has(next)) continue;
    const schema = all.get(next);
    if (!schema) continue;
    out.set(next, schema);
    visitRefs(schema, (ref) => {
      if (!out.has(ref)) pending.push(ref);
    });
  }
}

function visitRefs(value: unknown, onRef: (name: string) => void): void {
  if (Array.isArray(value)) {
    for (const item of value) visitRefs(item, onRef);
    return;
  }
  if (!value || typeof value !== 'object') return;
  const obj = value as Obj;
  if (typeof obj.$ref === 'string') {
    const name = refName(obj);
    if (name) onRef(name);
  }
  for (const key in obj) {
    if (key !== '$ref') visitRefs(obj[key], onRef);
  }
}

function sortedObject(map: ReadonlyMap<string, Obj>): Obj {
  return Object.fromEntries([...map.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function v3Document(paths: Obj, schemas: ReadonlyMap<string, Obj>, options: DocumentOptions): Obj {
  return {
    openapi: '3.0.0',
    info: { title: 'Kubernetes', version: options.version },
    paths,
    components: { schemas: sortedObject(schemas), securitySchemes: SECURITY_SCHEME },
    security: [{ BearerToken: [] }],
  };
}

/**
 * Resolves the definitions of the served resources: a built-in kind names its definition, a
 * custom resource brings a schema. Resources with neither (or an unknown definition) are left
 * out of the documents, as kube-apiserver leaves out kinds it has no OpenAPI model for.
 */
export function resolveResources(resources: readonly OpenApiResource[]): {
  resolved: ResolvedResource[];
  definitions: Map<string, Obj>;
  v2Overrides: Map<string, Obj>;
} {
  const builtin = builtinSpec().schemas;
  const definitions = new Map<string, Obj>();
  const v2Overrides = new Map<string, Obj>();
  const resolved: ResolvedResource[] = [];
  for (const res of resources) {
    if (res.definition !== undefined) {
      const schema = builtin.get(res.definition);
      if (!schema) continue;
      const listDefinition = `${res.definition}List`;
      definitions.set(res.definition, schema);
      definitions.set(
        listDefinition,
        builtin.get(listDefinition) ??
          listSchema(res.group, res.version, res.kind, res.resource, res.definition),
      );
      resolved.push({ res, definition: res.definition, listDefinition, custom: false });
    } else if (res.schema !== undefined) {
      const definition = customResourceDefinitionName(res.group, res.version, res.kind);
      const listDefinition = `${definition}List`;
      definitions.set(definition, customResourceSchema(res, res.schema));
      v2Overrides.set(definition, customResourceSchema(res, structuralToV2(res.schema)));
      definitions.set(listDefinition, listSchema(res.group, res.version, res.kind, res.resource, definition));
      resolved.push({ res, definition, listDefinition, custom: true });
    }
  }
  return { resolved, definitions, v2Overrides };
}

/**
 * apiextensions' `ToStructuralOpenAPIV2`: a custom resource's schema published in v2 loses its
 * junctors (`allOf`, `anyOf`, `oneOf`, `not`); nullable and preserve-unknown-fields values lose
 * `items` and `properties` (and nullable ones their `type`), and arrays left without items
 * their `type`, because kubectl's v2 client-side validation would otherwise reject valid
 * objects. Fields that may be null are no longer `required`.
 */
export function structuralToV2(schema: Obj): Obj {
  const out: Obj = { ...schema };
  delete out.allOf;
  delete out.anyOf;
  delete out.oneOf;
  delete out.not;
  if (out.nullable === true) {
    delete out.type;
    delete out.items;
    delete out.properties;
  }
  delete out.nullable;
  if (out['x-kubernetes-preserve-unknown-fields'] === true) {
    delete out.items;
    delete out.properties;
  }
  if (out.items === undefined && out.type === 'array') delete out.type;
  const properties = out.properties as Obj | undefined;
  if (properties && typeof properties === 'object') {
    const converted: Obj = {};
    let required = Array.isArray(out.required) ? (out.required as unknown[]) : undefined;
    for (const [name, sub] of Object.entries(properties)) {
      if (!sub || typeof sub !== 'object') continue;
      if ((sub as Obj).nullable === true && required) required = required.filter((r) => r !== name);
      converted[name] = structuralToV2(sub as Obj);
    }
    out.properties = converted;
    if (required && required.length > 0) out.required = required;
    else delete out.required;
  }
  const additional = out.additionalProperties;
  if (additional && typeof additional === 'object') {
    if ((additional as Obj).nullable === true) delete out.required;
    out.additionalProperties = structuralToV2(additional as Obj);
  }
  const items = out.items;
  if (items && typeof items === 'object' && !Array.isArray(items)) out.items = structuralToV2(items as Obj);
  return out;
}

/** Builds every document for one snapshot of the served resources. */
export function buildDocuments(
  resources: readonly OpenApiResource[],
  options: DocumentOptions,
): BuiltDocuments {
  const { resolved, definitions, v2Overrides } = resolveResources(resources);
  const builtin = builtinSpec().schemas;
  const all = new Map<string, Obj>(builtin);
  for (const [name, schema] of definitions) all.set(name, schema);

  const byGroupVersion = new Map<string, ResolvedResource[]>();
  for (const r of resolved) {
    const key = r.res.group === '' ? `api/${r.res.version}` : `apis/${r.res.group}/${r.res.version}`;
    const list = byGroupVersion.get(key);
    if (list) list.push(r);
    else byGroupVersion.set(key, [r]);
  }

  const v3 = new Map<string, Obj>();
  const allPaths: Obj = {};
  const allDefinitions = new Map<string, Obj>();
  const groups = new Set<string>();
  for (const [key, members] of byGroupVersion) {
    const first = members[0] as ResolvedResource;
    const { group, version } = first.res;
    if (group !== '') groups.add(group);
    const paths = groupVersionPaths(group, version, members);
    const schemas = new Map<string, Obj>();
    for (const name of COMMON_DEFINITIONS) collectDefinitions(name, all, schemas);
    for (const member of members) {
      collectDefinitions(member.definition, all, schemas);
      collectDefinitions(member.listDefinition, all, schemas);
      if (member.res.subresources.includes('scale')) collectDefinitions(SCALE_DEFINITION, all, schemas);
    }
    v3.set(key, v3Document(paths, schemas, options));
    Object.assign(allPaths, paths);
    for (const [name, schema] of schemas) allDefinitions.set(name, schema);
  }

  const discovery: { key: string; paths: Obj }[] = [
    discoveryPaths('api'),
    discoveryPaths('apis'),
    discoveryPaths('version'),
  ];
  for (const group of groups) discovery.push(discoveryPaths('group', group));
  for (const { key, paths } of discovery) {
    const schemas = new Map<string, Obj>();
    visitRefs(paths, (name) => collectDefinitions(name, all, schemas));
    v3.set(key, v3Document(paths, schemas, options));
    Object.assign(allPaths, paths);
    for (const [name, schema] of schemas) allDefinitions.set(name, schema);
  }

  const sortedPaths = Object.fromEntries(
    Object.entries(allPaths).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
  return { v3, paths: sortedPaths, resources: resolved, definitions: allDefinitions, v2Overrides };
}

// ---------------------------------------------------------------------------------------------
// OpenAPI v2

const V2_REF_PREFIX = '#/definitions/';

/**
 * Converts a schema from OpenAPI v3 to Swagger 2.0 the way kube-apiserver publishes v2:
 * refs point to `#/definitions/`, a ref wrapped in `allOf` becomes a plain `$ref` beside its
 * description, and what v2 cannot say (`nullable`, `anyOf`, `oneOf`, `not`) is dropped, with a
 * nullable field losing its `type` so that clients validating against v2 accept `null`.
 */
export function schemaToV2(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(schemaToV2);
  if (!schema || typeof schema !== 'object') return schema;
  const src = schema as Obj;
  const out: Obj = {};
  const wrapped = Array.isArray(src.allOf) && src.allOf.length === 1 ? refName(src) : undefined;
  for (const key in src) {
    const value = src[key];
    switch (key) {
      case '$ref':
        out.$ref = typeof value === 'string' ? value.replace(V3_REF_PREFIX, V2_REF_PREFIX) : value;
        break;
      case 'allOf':
        if (wrapped !== undefined) out.$ref = V2_REF_PREFIX + wrapped;
        else out.allOf = schemaToV2(value);
        break;
      case 'nullable':
      case 'anyOf':
      case 'oneOf':
      case 'not':
        break;
      case 'properties':
      case 'patternProperties':
      case 'definitions': {
        const props: Obj = {};
        for (const [name, sub] of Object.entries((value as Obj | undefined) ?? {}))
          props[name] = schemaToV2(sub);
        out[key] = props;
        break;
      }
      case 'default':
      case 'example':
      case 'enum':
      case 'x-kubernetes-group-version-kind':
      case 'x-kubernetes-validations':
        // Literal values, not schemas: copied as they are.
        out[key] = value;
        break;
      default:
        out[key] = schemaToV2(value);
    }
  }
  if (src.nullable === true) delete out.type;
  return out;
}

function operationToV2(operation: Obj): Obj {
  const out: Obj = {};
  const consumes = new Set<string>();
  const produces = new Set<string>();
  const parameters: Obj[] = [];
  for (const param of (operation.parameters as Obj[] | undefined) ?? [])
    parameters.push(parameterToV2(param));
  const requestBody = operation.requestBody as Obj | undefined;
  if (requestBody) {
    const media = (requestBody.content as Obj | undefined) ?? {};
    let schema: unknown;
    for (const [type, entry] of Object.entries(media)) {
      consumes.add(type);
      schema ??= (entry as Obj).schema;
    }
    parameters.unshift({
      in: 'body',
      name: 'body',
      ...(requestBody.required === true ? { required: true } : {}),
      schema: schemaToV2(schema),
    });
  }
  const responses: Obj = {};
  for (const [code, response] of Object.entries((operation.responses as Obj | undefined) ?? {})) {
    const r = response as Obj;
    const v2: Obj = { description: r.description };
    const media = r.content as Obj | undefined;
    if (media) {
      for (const [type, entry] of Object.entries(media)) {
        produces.add(type);
        v2.schema ??= schemaToV2((entry as Obj).schema);
      }
    }
    responses[code] = v2;
  }
  for (const [key, value] of Object.entries(operation)) {
    if (key === 'parameters' || key === 'requestBody' || key === 'responses') continue;
    out[key] = value;
  }
  if (consumes.size > 0) out.consumes = [...consumes];
  if (produces.size > 0) out.produces = [...produces];
  if (parameters.length > 0) out.parameters = parameters;
  out.responses = responses;
  out.schemes = ['https'];
  return out;
}

function parameterToV2(param: Obj): Obj {
  const { schema, ...rest } = param;
  return { ...rest, ...((schema as Obj | undefined) ?? {}) };
}

/** The OpenAPI v2 (Swagger 2.0) document of everything in `built`, as kube-apiserver's `/openapi/v2`. */
export function buildSwaggerV2(built: BuiltDocuments, options: DocumentOptions): Obj {
  const { paths, definitions, v2Overrides } = built;
  const v2Paths: Obj = {};
  for (const [path, item] of Object.entries(paths)) {
    const v2Item: Obj = {};
    for (const [method, value] of Object.entries(item as Obj)) {
      if (method === 'parameters') v2Item.parameters = (value as Obj[]).map(parameterToV2);
      else v2Item[method] = operationToV2(value as Obj);
    }
    v2Paths[path] = v2Item;
  }
  const v2Definitions: Obj = {};
  for (const [name, schema] of [...definitions.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    v2Definitions[name] = schemaToV2(v2Overrides.get(name) ?? schema);
  }
  return {
    swagger: '2.0',
    info: { title: 'Kubernetes', version: options.version },
    paths: v2Paths,
    definitions: v2Definitions,
    securityDefinitions: SECURITY_SCHEME,
    security: [{ BearerToken: [] }],
  };
}
