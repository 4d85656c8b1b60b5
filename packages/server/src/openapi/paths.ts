/**
 * The `paths` of the OpenAPI documents: one operation per REST endpoint of each served
 * resource, documented the way kube-apiserver documents it (operation ids, tags, parameters,
 * `x-kubernetes-action`, `x-kubernetes-group-version-kind`).
 *
 * kubectl reads them: `create`, `replace` and `apply` look for the `fieldValidation` parameter
 * on the resource's PATCH operations to decide whether the server validates fields itself.
 */
import { builtinSpec, type Gvk, type Obj, V3_REF_PREFIX } from './builtin.js';

/** A resource served by the API server, as the HTTP layer describes it to the OpenAPI service. */
export interface OpenApiResource {
  group: string;
  version: string;
  kind: string;
  /** Plural resource name, as in the URL (`deployments`). */
  resource: string;
  namespaced: boolean;
  /** Subset of get list watch create update patch delete deletecollection. */
  verbs: readonly string[];
  /** Subresources served, e.g. `['status', 'scale']`; only `status` and `scale` are documented. */
  subresources: readonly string[];
  /**
   * Whether DELETE answers with the deleted object rather than a `Status` (documented as the
   * DELETE response); by default, what kube-apiserver does for the kind.
   */
  returnDeletedObject?: boolean;
  /** Name of the definition in `k8s-schemas.generated.json`, for built-in kinds… */
  definition?: string;
  /**
   * …or the OpenAPI v3 schema of a custom resource (a CRD version's `openAPIV3Schema`),
   * published under a definition named after the reverse-DNS group (`com.example.v1.Foo`).
   */
  schema?: Record<string, unknown>;
}

/** The definitions one served resource needs, resolved by the document builder. */
export interface ResolvedResource {
  res: OpenApiResource;
  /** Definition of the kind. */
  definition: string;
  /** Definition of its list. */
  listDefinition: string;
  /** Served as a custom resource: no protobuf, no strategic merge patch. */
  custom: boolean;
}

/** `DELETE` of these kinds answers with the deleted object rather than a `Status`. */
const DELETE_RETURNS_OBJECT = new Set([
  'io.k8s.api.core.v1.PersistentVolume',
  'io.k8s.api.core.v1.PersistentVolumeClaim',
  'io.k8s.api.core.v1.Pod',
  'io.k8s.api.core.v1.PodTemplate',
  'io.k8s.api.core.v1.ResourceQuota',
  'io.k8s.api.core.v1.Service',
  'io.k8s.api.core.v1.ServiceAccount',
]);

const STATUS = 'io.k8s.apimachinery.pkg.apis.meta.v1.Status';
const DELETE_OPTIONS = 'io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions';
const PATCH = 'io.k8s.apimachinery.pkg.apis.meta.v1.Patch';
const WATCH_EVENT = 'io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent';
const SCALE = 'io.k8s.api.autoscaling.v1.Scale';
const SCALE_GVK: Gvk = { group: 'autoscaling', version: 'v1', kind: 'Scale' };

/** Definitions every group-version document refers to, besides its kinds'. */
export const COMMON_DEFINITIONS = [
  'io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList',
  DELETE_OPTIONS,
  PATCH,
  STATUS,
  WATCH_EVENT,
];
export { SCALE as SCALE_DEFINITION };

const LIST_PARAMS = [
  'allowWatchBookmarks',
  'continue',
  'fieldSelector',
  'labelSelector',
  'limit',
  'resourceVersion',
  'resourceVersionMatch',
  'sendInitialEvents',
  'timeoutSeconds',
  'watch',
];
const WRITE_PARAMS = ['dryRun', 'fieldManager', 'fieldValidation'];
const PATCH_PARAMS = ['dryRun', 'fieldManager:patch', 'fieldValidation', 'force'];
const DELETE_PARAMS = ['dryRun', 'gracePeriodSeconds', 'orphanDependents', 'propagationPolicy'];
const DELETECOLLECTION_PARAMS = [
  'continue',
  'dryRun',
  'fieldSelector',
  'gracePeriodSeconds',
  'labelSelector',
  'limit',
  'orphanDependents',
  'propagationPolicy',
  'resourceVersion',
  'resourceVersionMatch',
  'sendInitialEvents',
  'timeoutSeconds',
];

const BUILTIN_MEDIA = ['application/json', 'application/yaml', 'application/vnd.kubernetes.protobuf'];
const BUILTIN_STREAM_MEDIA = [
  ...BUILTIN_MEDIA,
  'application/json;stream=watch',
  'application/vnd.kubernetes.protobuf;stream=watch',
];
const CUSTOM_MEDIA = ['application/json', 'application/yaml'];
const CUSTOM_STREAM_MEDIA = [...CUSTOM_MEDIA, 'application/json;stream=watch'];
const BUILTIN_PATCH_MEDIA = [
  'application/apply-patch+yaml',
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
];
const CUSTOM_PATCH_MEDIA = [
  'application/apply-patch+yaml',
  'application/json-patch+json',
  'application/merge-patch+json',
];

/** kube-apiserver's `ToValidOperationID`: letters kept, anything else starts a capitalised word. */
export function toOperationId(text: string, capitalizeFirst: boolean): string {
  let out = '';
  let capitalize = capitalizeFirst;
  let first = true;
  for (const ch of text) {
    const letter = /\p{L}/u.test(ch);
    if (letter || ch === '_' || (!first && /\p{Nd}/u.test(ch))) {
      out += capitalize ? ch.toUpperCase() : ch;
      capitalize = false;
    } else {
      capitalize = true;
    }
    first = false;
  }
  return out;
}

/** The group as operation ids spell it (`apps` → `Apps`, `rbac.authorization.k8s.io` → `RbacAuthorization`). */
export function groupIdentifier(group: string, capitalizeFirst = true): string {
  return toOperationId(group === '' ? 'core' : group.replace(/\.k8s\.io$/, ''), capitalizeFirst);
}

/** `/api/v1` or `/apis/<group>/<version>`. */
export function groupVersionPrefix(group: string, version: string): string {
  return group === '' ? `/api/${version}` : `/apis/${group}/${version}`;
}

/** Article before a kind in descriptions: none before plurals (`create Endpoints`). */
function article(kind: string): string {
  if (kind.endsWith('s') && !kind.endsWith('ss')) return ' ';
  return /^[aeiouAEIOU]/.test(kind) ? ' an ' : ' a ';
}

function ref(definition: string): Obj {
  return { $ref: V3_REF_PREFIX + definition };
}

function content(media: readonly string[], definition: string): Obj {
  return Object.fromEntries(media.map((type) => [type, { schema: ref(definition) }]));
}

function queryParams(names: readonly string[]): Obj[] {
  const params = builtinSpec().parameters;
  const out: Obj[] = [];
  for (const name of names) {
    const param = params.get(name);
    if (param) out.push(param);
  }
  return out;
}

function pathParam(name: 'name' | 'namespace', kind: string): Obj {
  return {
    description:
      name === 'name' ? `name of the ${kind}` : 'object name and auth scope, such as for teams and projects',
    in: 'path',
    name,
    required: true,
    schema: { type: 'string', uniqueItems: true },
  };
}

const UNAUTHORIZED = { description: 'Unauthorized' };

/** The `paths` entries of one group-version, keyed by URL path template. */
export function groupVersionPaths(
  group: string,
  version: string,
  resources: readonly ResolvedResource[],
): Obj {
  const prefix = groupVersionPrefix(group, version);
  const idPrefix = groupIdentifier(group) + toOperationId(version, true);
  const tag = `${groupIdentifier(group, false)}_${toOperationId(version, false)}`;
  const paths: Record<string, Obj> = {};

  paths[`${prefix}/`] = {
    get: {
      description: 'get available resources',
      operationId: `get${idPrefix}APIResources`,
      responses: {
        '200': {
          description: 'OK',
          content: content(BUILTIN_MEDIA, 'io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList'),
        },
        '401': UNAUTHORIZED,
      },
      tags: [tag],
    },
  };

  const sorted = [...resources].sort((a, b) => a.res.resource.localeCompare(b.res.resource));
  for (const resolved of sorted) addResourcePaths(paths, prefix, idPrefix, tag, resolved);
  return Object.fromEntries(Object.entries(paths).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function addResourcePaths(
  paths: Record<string, Obj>,
  prefix: string,
  idPrefix: string,
  tag: string,
  resolved: ResolvedResource,
): void {
  const { res, definition, listDefinition, custom } = resolved;
  const { kind, resource, namespaced } = res;
  const verbs = new Set(res.verbs);
  const gvk: Obj = { group: res.group, kind, version: res.version };
  const media = custom ? CUSTOM_MEDIA : BUILTIN_MEDIA;
  const streamMedia = custom ? CUSTOM_STREAM_MEDIA : BUILTIN_STREAM_MEDIA;
  const scope = namespaced ? 'Namespaced' : '';
  const id = (verb: string, middle: string, suffix = '') =>
    `${verb}${idPrefix}${middle}${scope}${kind}${suffix}`;
  const op = (extra: Obj, action: string, opGvk: Obj = gvk): Obj => ({
    ...extra,
    tags: [tag],
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': opGvk,
  });
  const ok = (def: string, types = media) => ({ description: 'OK', content: content(types, def) });
  const created = (def: string) => ({ description: 'Created', content: content(media, def) });
  const accepted = (def: string) => ({ description: 'Accepted', content: content(media, def) });
  const body = (def: string, required = true): Obj => ({
    content: { '*/*': { schema: ref(def) } },
    ...(required ? { required: true } : {}),
  });
  const patchBody: Obj = {
    content: Object.fromEntries(
      (custom ? CUSTOM_PATCH_MEDIA : BUILTIN_PATCH_MEDIA).map((t) => [t, { schema: ref(PATCH) }]),
    ),
    required: true,
  };
  const pretty = queryParams(['pretty']);
  const ns = namespaced ? [pathParam('namespace', kind)] : [];
  const collection = `${prefix}${namespaced ? '/namespaces/{namespace}' : ''}/${resource}`;
  const item = `${collection}/{name}`;
  const deleted = (res.returnDeletedObject ?? DELETE_RETURNS_OBJECT.has(definition)) ? definition : STATUS;

  const collectionOps: Obj = {};
  if (verbs.has('list')) {
    collectionOps.get = op(
      {
        description: `list or watch objects of kind ${kind}`,
        operationId: id('list', ''),
        parameters: queryParams(LIST_PARAMS),
        responses: { '200': ok(listDefinition, streamMedia), '401': UNAUTHORIZED },
      },
      'list',
    );
  }
  if (verbs.has('create')) {
    collectionOps.post = op(
      {
        description: `create${article(kind)}${kind}`,
        operationId: id('create', ''),
        parameters: queryParams(WRITE_PARAMS),
        requestBody: body(definition),
        responses: {
          '200': ok(definition),
          '201': created(definition),
          '202': accepted(definition),
          '401': UNAUTHORIZED,
        },
      },
      'post',
    );
  }
  if (verbs.has('deletecollection')) {
    collectionOps.delete = op(
      {
        description: `delete collection of ${kind}`,
        operationId: id('delete', 'Collection'),
        parameters: queryParams(DELETECOLLECTION_PARAMS),
        requestBody: body(DELETE_OPTIONS, false),
        responses: { '200': ok(STATUS), '401': UNAUTHORIZED },
      },
      'deletecollection',
    );
  }
  if (Object.keys(collectionOps).length > 0) {
    paths[collection] = { ...collectionOps, parameters: [...ns, ...pretty] };
  }

  const itemOps: Obj = {};
  if (verbs.has('get')) {
    itemOps.get = op(
      {
        description: `read the specified ${kind}`,
        operationId: id('read', ''),
        responses: { '200': ok(definition), '401': UNAUTHORIZED },
      },
      'get',
    );
  }
  if (verbs.has('update')) {
    itemOps.put = op(
      {
        description: `replace the specified ${kind}`,
        operationId: id('replace', ''),
        parameters: queryParams(WRITE_PARAMS),
        requestBody: body(definition),
        responses: { '200': ok(definition), '201': created(definition), '401': UNAUTHORIZED },
      },
      'put',
    );
  }
  if (verbs.has('patch')) {
    itemOps.patch = op(
      {
        description: `partially update the specified ${kind}`,
        operationId: id('patch', ''),
        parameters: queryParams(PATCH_PARAMS),
        requestBody: patchBody,
        responses: { '200': ok(definition), '201': created(definition), '401': UNAUTHORIZED },
      },
      'patch',
    );
  }
  if (verbs.has('delete')) {
    itemOps.delete = op(
      {
        description: `delete${article(kind)}${kind}`,
        operationId: id('delete', ''),
        parameters: queryParams(DELETE_PARAMS),
        requestBody: body(DELETE_OPTIONS, false),
        responses: { '200': ok(deleted), '202': accepted(deleted), '401': UNAUTHORIZED },
      },
      'delete',
    );
  }
  if (Object.keys(itemOps).length > 0) {
    paths[item] = { ...itemOps, parameters: [pathParam('name', kind), ...ns, ...pretty] };
  }

  for (const sub of res.subresources) {
    if (sub !== 'status' && sub !== 'scale') continue;
    const subDef = sub === 'status' ? definition : SCALE;
    const subGvk: Obj = sub === 'status' ? gvk : { ...SCALE_GVK };
    const suffix = sub === 'status' ? 'Status' : 'Scale';
    const subOps: Obj = {
      get: op(
        {
          description: `read ${sub} of the specified ${kind}`,
          operationId: id('read', '', suffix),
          responses: { '200': ok(subDef), '401': UNAUTHORIZED },
        },
        'get',
        subGvk,
      ),
      put: op(
        {
          description: `replace ${sub} of the specified ${kind}`,
          operationId: id('replace', '', suffix),
          parameters: queryParams(WRITE_PARAMS),
          requestBody: body(subDef),
          responses: { '200': ok(subDef), '201': created(subDef), '401': UNAUTHORIZED },
        },
        'put',
        subGvk,
      ),
      patch: op(
        {
          description: `partially update ${sub} of the specified ${kind}`,
          operationId: id('patch', '', suffix),
          parameters: queryParams(PATCH_PARAMS),
          requestBody: patchBody,
          responses: { '200': ok(subDef), '201': created(subDef), '401': UNAUTHORIZED },
        },
        'patch',
        subGvk,
      ),
    };
    paths[`${item}/${sub}`] = { ...subOps, parameters: [pathParam('name', kind), ...ns, ...pretty] };
  }

  if (verbs.has('watch')) {
    const listParams = queryParams(LIST_PARAMS);
    const watchResponses = { '200': ok(WATCH_EVENT, streamMedia), '401': UNAUTHORIZED };
    const watchPrefix = `${prefix}/watch${namespaced ? '/namespaces/{namespace}' : ''}/${resource}`;
    paths[watchPrefix] = {
      get: op(
        {
          description: `watch individual changes to a list of ${kind}. deprecated: use the 'watch' parameter with a list operation instead.`,
          operationId: id('watch', '', 'List'),
          responses: watchResponses,
        },
        'watchlist',
      ),
      parameters: sortParams([...listParams, ...ns, ...pretty]),
    };
    paths[`${watchPrefix}/{name}`] = {
      get: op(
        {
          description: `watch changes to an object of kind ${kind}. deprecated: use the 'watch' parameter with a list operation instead, filtered to a single item with the 'fieldSelector' parameter.`,
          operationId: id('watch', ''),
          responses: watchResponses,
        },
        'watch',
      ),
      parameters: sortParams([...listParams, pathParam('name', kind), ...ns, ...pretty]),
    };
  }

  if (namespaced && (verbs.has('list') || verbs.has('watch'))) {
    const allId = (verb: string, suffix: string) => `${verb}${idPrefix}${kind}${suffix}ForAllNamespaces`;
    const listParams = sortParams([...queryParams(LIST_PARAMS), ...pretty]);
    if (verbs.has('list')) {
      paths[`${prefix}/${resource}`] = {
        get: op(
          {
            description: `list or watch objects of kind ${kind}`,
            operationId: allId('list', ''),
            responses: { '200': ok(listDefinition, streamMedia), '401': UNAUTHORIZED },
          },
          'list',
        ),
        parameters: listParams,
      };
    }
    if (verbs.has('watch')) {
      paths[`${prefix}/watch/${resource}`] = {
        get: op(
          {
            description: `watch individual changes to a list of ${kind}. deprecated: use the 'watch' parameter with a list operation instead.`,
            operationId: allId('watch', 'List'),
            responses: { '200': ok(WATCH_EVENT, streamMedia), '401': UNAUTHORIZED },
          },
          'watchlist',
        ),
        parameters: listParams,
      };
    }
  }
}

function sortParams(params: Obj[]): Obj[] {
  return params.sort((a, b) => String(a.name).localeCompare(String(b.name)));
}

/**
 * The paths describing discovery itself: `/api/`, `/apis/`, `/apis/<group>/` and `/version/`,
 * each published by kube-apiserver in an OpenAPI v3 document of its own.
 */
export function discoveryPaths(
  kind: 'api' | 'apis' | 'group' | 'version',
  group = '',
): { key: string; paths: Obj } {
  const get = (
    description: string,
    operationId: string,
    tag: string,
    definition: string,
    media = BUILTIN_MEDIA,
  ) => ({
    get: {
      description,
      operationId,
      responses: { '200': { description: 'OK', content: content(media, definition) }, '401': UNAUTHORIZED },
      tags: [tag],
    },
  });
  switch (kind) {
    case 'api':
      return {
        key: 'api',
        paths: {
          '/api/': get(
            'get available API versions',
            'getCoreAPIVersions',
            'core',
            'io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions',
          ),
        },
      };
    case 'apis':
      return {
        key: 'apis',
        paths: {
          '/apis/': get(
            'get available API versions',
            'getAPIVersions',
            'apis',
            'io.k8s.apimachinery.pkg.apis.meta.v1.APIGroupList',
          ),
        },
      };
    case 'group':
      return {
        key: `apis/${group}`,
        paths: {
          [`/apis/${group}/`]: get(
            'get information of a group',
            `get${groupIdentifier(group)}APIGroup`,
            groupIdentifier(group, false),
            'io.k8s.apimachinery.pkg.apis.meta.v1.APIGroup',
          ),
        },
      };
    case 'version':
      return {
        key: 'version',
        paths: {
          '/version/': get(
            'get the code version',
            'getCodeVersion',
            'version',
            'io.k8s.apimachinery.pkg.version.Info',
            ['application/json'],
          ),
        },
      };
  }
}
