/**
 * Random and mutated requests for the API server fuzz test. Every request is derived from
 * `(seed, index)` alone, so a failing request can be regenerated from the printed seed and index
 * whatever the order in which concurrent requests were answered.
 */
import { stringify as toYaml } from 'yaml';
import { Random } from './status-check.js';

type Obj = Record<string, unknown>;

/** One generated request. */
export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: Buffer;
  /** A watch: its stream is read briefly, then closed. */
  watch: boolean;
  /** Short text for failure reports. */
  describe: string;
}

interface KindSpec {
  prefix: string;
  resource: string;
  apiVersion: string;
  kind: string;
  namespaced: boolean;
  subresources: string[];
  sample(name: string): Obj;
}

const podSpec = (): Obj => ({
  containers: [
    {
      name: 'app',
      image: 'nginx:1.27',
      ports: [{ containerPort: 80, protocol: 'TCP' }],
      resources: { requests: { cpu: '100m', memory: '64Mi' }, limits: { memory: '128Mi' } },
      env: [{ name: 'MODE', value: 'fuzz' }],
    },
  ],
});
const template = (app: string): Obj => ({ metadata: { labels: { app } }, spec: podSpec() });

/** The kinds the fuzzer writes, each with a valid object to start mutating from. */
export const KINDS: KindSpec[] = [
  {
    prefix: '/api/v1',
    resource: 'configmaps',
    apiVersion: 'v1',
    kind: 'ConfigMap',
    namespaced: true,
    subresources: [],
    sample: (name) => ({ metadata: { name, labels: { app: 'fuzz' } }, data: { key: 'value', 'b.txt': 'x' } }),
  },
  {
    prefix: '/api/v1',
    resource: 'secrets',
    apiVersion: 'v1',
    kind: 'Secret',
    namespaced: true,
    subresources: [],
    sample: (name) => ({
      metadata: { name },
      type: 'Opaque',
      data: { password: Buffer.from('hunter2').toString('base64') },
      stringData: { user: 'admin' },
    }),
  },
  {
    prefix: '/api/v1',
    resource: 'pods',
    apiVersion: 'v1',
    kind: 'Pod',
    namespaced: true,
    subresources: ['status'],
    sample: (name) => ({ metadata: { name, labels: { app: 'fuzz', tier: 'web' } }, spec: podSpec() }),
  },
  {
    prefix: '/api/v1',
    resource: 'services',
    apiVersion: 'v1',
    kind: 'Service',
    namespaced: true,
    subresources: ['status'],
    sample: (name) => ({
      metadata: { name },
      spec: { selector: { app: 'fuzz' }, ports: [{ name: 'http', port: 80, targetPort: 8080 }] },
    }),
  },
  {
    prefix: '/api/v1',
    resource: 'serviceaccounts',
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    namespaced: true,
    subresources: [],
    sample: (name) => ({ metadata: { name }, automountServiceAccountToken: false }),
  },
  {
    prefix: '/api/v1',
    resource: 'events',
    apiVersion: 'v1',
    kind: 'Event',
    namespaced: true,
    subresources: [],
    sample: (name) => ({
      metadata: { name },
      involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' },
      reason: 'Fuzzed',
      message: 'a fuzzed event',
      type: 'Normal',
      count: 1,
    }),
  },
  {
    prefix: '/api/v1',
    resource: 'namespaces',
    apiVersion: 'v1',
    kind: 'Namespace',
    namespaced: false,
    subresources: ['status'],
    sample: (name) => ({ metadata: { name: `fz-${name}`.slice(0, 63).replace(/[.]/g, '-') } }),
  },
  {
    prefix: '/api/v1',
    resource: 'nodes',
    apiVersion: 'v1',
    kind: 'Node',
    namespaced: false,
    subresources: ['status'],
    sample: (name) => ({ metadata: { name, labels: { 'kubernetes.io/os': 'linux' } }, spec: {} }),
  },
  {
    prefix: '/apis/apps/v1',
    resource: 'deployments',
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    namespaced: true,
    subresources: ['status', 'scale'],
    sample: (name) => ({
      metadata: { name },
      spec: { replicas: 2, selector: { matchLabels: { app: name } }, template: template(name) },
    }),
  },
  {
    prefix: '/apis/apps/v1',
    resource: 'statefulsets',
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    namespaced: true,
    subresources: ['status', 'scale'],
    sample: (name) => ({
      metadata: { name },
      spec: {
        serviceName: name,
        replicas: 1,
        selector: { matchLabels: { app: name } },
        template: template(name),
      },
    }),
  },
  {
    prefix: '/apis/batch/v1',
    resource: 'jobs',
    apiVersion: 'batch/v1',
    kind: 'Job',
    namespaced: true,
    subresources: ['status'],
    sample: (name) => ({
      metadata: { name },
      spec: { backoffLimit: 1, template: { spec: { ...podSpec(), restartPolicy: 'Never' } } },
    }),
  },
  {
    prefix: '/apis/coordination.k8s.io/v1',
    resource: 'leases',
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    namespaced: true,
    subresources: [],
    sample: (name) => ({ metadata: { name }, spec: { holderIdentity: 'me', leaseDurationSeconds: 15 } }),
  },
  {
    prefix: '/apis/rbac.authorization.k8s.io/v1',
    resource: 'roles',
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    namespaced: true,
    subresources: [],
    sample: (name) => ({
      metadata: { name },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }],
    }),
  },
  {
    prefix: '/apis/rbac.authorization.k8s.io/v1',
    resource: 'clusterroles',
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    namespaced: false,
    subresources: [],
    sample: (name) => ({
      metadata: { name: `fuzz:${name}` },
      rules: [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['*'] }],
    }),
  },
  {
    prefix: '/apis/fuzz.example.com/v1',
    resource: 'widgets',
    apiVersion: 'fuzz.example.com/v1',
    kind: 'Widget',
    namespaced: true,
    subresources: ['status', 'scale'],
    sample: (name) => ({
      metadata: { name, labels: { app: 'fuzz' } },
      spec: {
        color: 'green',
        replicas: 3,
        size: '10Gi',
        tags: ['a', 'b'],
        limits: '50%',
        extra: { free: { form: [1, 'two'] } },
        ports: [{ name: 'http', port: 80 }],
      },
    }),
  },
  {
    prefix: '/apis/apiextensions.k8s.io/v1',
    resource: 'customresourcedefinitions',
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    namespaced: false,
    subresources: ['status'],
    sample: (name) => {
      const plural = `${name.replace(/[^a-z0-9]/g, '')}s` || 'things';
      return {
        metadata: { name: `${plural}.fuzz.example.com` },
        spec: {
          group: 'fuzz.example.com',
          scope: 'Namespaced',
          names: { plural, singular: plural.slice(0, -1) || 'thing', kind: 'Fuzz', listKind: 'FuzzList' },
          versions: [
            {
              name: 'v1',
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
            },
          ],
        },
      };
    },
  },
];

/**
 * A CustomResourceDefinition the test creates before fuzzing, so that custom resources (schema
 * validation, defaulting, pruning, CEL, status and scale subresources) are fuzzed too.
 */
export const WIDGET_CRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.fuzz.example.com' },
  spec: {
    group: 'fuzz.example.com',
    scope: 'Namespaced',
    names: {
      plural: 'widgets',
      singular: 'widget',
      kind: 'Widget',
      listKind: 'WidgetList',
      shortNames: ['wd'],
    },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        subresources: {
          status: {},
          scale: {
            specReplicasPath: '.spec.replicas',
            statusReplicasPath: '.status.replicas',
            labelSelectorPath: '.status.selector',
          },
        },
        additionalPrinterColumns: [
          { name: 'Replicas', type: 'integer', jsonPath: '.spec.replicas' },
          { name: 'Color', type: 'string', jsonPath: '.spec.color', priority: 1 },
        ],
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                required: ['color'],
                'x-kubernetes-validations': [
                  { rule: 'self.replicas <= 10 || self.color == "red"', message: 'too many' },
                ],
                properties: {
                  color: { type: 'string', enum: ['red', 'green', 'blue'] },
                  replicas: { type: 'integer', minimum: 0, maximum: 20, default: 1 },
                  size: { type: 'string', pattern: '^[0-9]+(Mi|Gi)$', maxLength: 10 },
                  tags: {
                    type: 'array',
                    items: { type: 'string' },
                    maxItems: 5,
                    'x-kubernetes-list-type': 'set',
                  },
                  limits: { 'x-kubernetes-int-or-string': true },
                  extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                  ports: {
                    type: 'array',
                    'x-kubernetes-list-type': 'map',
                    'x-kubernetes-list-map-keys': ['name'],
                    items: {
                      type: 'object',
                      required: ['name'],
                      properties: { name: { type: 'string' }, port: { type: 'integer', format: 'int32' } },
                    },
                  },
                },
              },
              status: {
                type: 'object',
                properties: {
                  replicas: { type: 'integer' },
                  selector: { type: 'string' },
                  conditions: {
                    type: 'array',
                    items: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                  },
                },
              },
            },
          },
        },
      },
    ],
  },
};

/** Namespaces the test creates before fuzzing; requests mostly target these. */
export const FUZZ_NAMESPACES = ['default', 'fuzz-a', 'fuzz-b'];
const NAMES = ['a', 'b', 'c', 'web', 'x.y', 'db-0'];
const BAD_NAMES = [
  'Bad_Name',
  'UPPER',
  '-lead',
  'trail-',
  'a..b',
  `${'n'.repeat(254)}`,
  'ünïcode',
  'sp ace',
  '%2e%2e',
  '..',
  '.',
  'a%2Fb',
  '%00',
  'name%20with%20space',
  'x'.repeat(64),
];
const BAD_NAMESPACES = ['nope', 'Bad_NS', '..', 'kube-system', 'a'.repeat(70), '%ff'];
const GROUPS = [
  '/api/v1',
  '/apis/apps/v1',
  '/apis/batch/v1',
  '/apis/nope.example.com/v1',
  '/apis/apps/v2',
  '/api/v2',
  '/apis/apps',
  '/apis',
  '/api',
  '/apis/rbac.authorization.k8s.io/v1',
  '/apis/coordination.k8s.io/v1',
  '/apis/apiextensions.k8s.io/v1',
  '/apis/events.k8s.io/v1',
];
const RESOURCES = ['configmaps', 'pods', 'deployments', 'foos', 'namespaces', 'secrets', 'nodes', 'jobs', ''];
const SUBRESOURCES = ['status', 'scale', 'log', 'exec', 'finalize', 'binding', 'eviction', 'x/y', ''];
const NON_RESOURCE = [
  '/',
  '/healthz',
  '/livez',
  '/readyz',
  '/readyz/verbose',
  '/version',
  '/metrics',
  '/openapi/v2',
  '/openapi/v3',
  '/openapi/v3/apis/apps/v1',
  '/openapi/v3/nope',
  '/logs',
  '/api/v1/namespaces/default/configmaps/a/b/c/d',
  '//api//v1//',
  '/api/v1/%zz',
  '/apis/apps/v1/deployments/x',
  '/.well-known/openid-configuration',
];
const SELECTORS = [
  'app=fuzz',
  'app==fuzz',
  'app!=fuzz',
  'app in (fuzz,web)',
  'tier notin (web)',
  'app',
  '!app',
  'app=fuzz,tier=web',
  'a in (b',
  '=x',
  'app=',
  'a b c',
  '!',
  'x/y/z=1',
  'app in ()',
  `k=${'v'.repeat(80)}`,
  '\u0000',
  'app>1',
  'app,,tier',
];
const FIELD_SELECTORS = [
  'metadata.name=a',
  'metadata.namespace!=default',
  'metadata.name==web,metadata.namespace=fuzz-a',
  'spec.nodeName=node-1',
  'status.phase=Running',
  'spec.unknown=1',
  'metadata.name',
  '=',
  'type=Opaque',
  'involvedObject.name=p',
  'metadata.name=a,',
  'status.phase in (Running)',
];
const CONTENT_TYPES = [
  'application/json',
  'application/json',
  'application/json',
  'application/yaml',
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/vnd.kubernetes.protobuf',
  '',
  'application/merge-patch+json',
  'application/json-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
  'application/json;;;=',
];
const ACCEPTS = [
  'application/json',
  'application/json',
  'application/json',
  '*/*',
  'application/yaml',
  'application/json;as=Table;v=v1;g=meta.k8s.io,application/json',
  'application/json;as=Table;v=v1;g=meta.k8s.io',
  'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io',
  'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io',
  'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json',
  'application/vnd.kubernetes.protobuf',
  'text/html',
  'application/json;as=Nope;v=v9;g=x',
  'garbage;;;',
];

/** Values that break a JSON document's types and sizes. */
function randomValue(r: Random, depth = 0): unknown {
  switch (r.int(depth > 2 ? 9 : 14)) {
    case 0:
      return null;
    case 1:
      return r.chance(0.5);
    case 2:
      return r.pick([0, -1, 1.5, 2 ** 31, 2 ** 53 + 2, -(2 ** 63), 1e308, -0, 65536, 3]);
    case 3:
      return r.string(r.int(12));
    case 4:
      return r.pick([
        '',
        ' ',
        '\u0000',
        'a\u0000b',
        'ünï©ødé ✓ 𝄞',
        '\ud800',
        '<script>',
        '../..',
        '%00',
        '\n\t',
      ]);
    case 5:
      return 'x'.repeat(r.pick([64, 254, 1000, 70_000]));
    case 6:
      return r.string(r.int(8), 'ABCabc-_./:@ 0123');
    case 7:
      return [];
    case 8:
      return {};
    case 9:
      return [randomValue(r, depth + 1), randomValue(r, depth + 1)];
    case 10:
      return { [r.string(3)]: randomValue(r, depth + 1), __proto__x: 1 };
    case 11:
      return nested(r.pick([20, 200, 1500]), r.chance(0.5));
    case 12:
      return Object.fromEntries([
        [r.pick(['app', 'a/b', 'x'.repeat(70), 'ex.com/k', '-bad', '']), r.string(5)],
      ]);
    default:
      return r.pick(['Always', 'Never', 'TCP', 'ClusterIP', 'Opaque', 'Running', '100m', '1Gi', 'true']);
  }
}

function nested(depth: number, arrays: boolean): unknown {
  let v: unknown = 1;
  for (let i = 0; i < depth; i++) v = arrays ? [v] : { n: v };
  return v;
}

/** Every JSON path (as key lists) of an object, parents before children. */
function paths(value: unknown, prefix: (string | number)[] = [], out: (string | number)[][] = []) {
  if (value === null || typeof value !== 'object' || prefix.length > 8) return out;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      out.push([...prefix, i]);
      paths(value[i], [...prefix, i], out);
    }
  } else {
    for (const [k, v] of Object.entries(value)) {
      out.push([...prefix, k]);
      paths(v, [...prefix, k], out);
    }
  }
  return out;
}

function setAt(root: unknown, path: (string | number)[], value: unknown, remove = false): void {
  let cur = root as Record<string | number, unknown>;
  for (const k of path.slice(0, -1)) {
    const next = cur[k];
    if (next === null || typeof next !== 'object') return;
    cur = next as Record<string | number, unknown>;
  }
  const last = path[path.length - 1]!;
  // Arrays get items, not properties (an own `constructor` would break their methods).
  if (Array.isArray(cur) && typeof last !== 'number') return;
  if (remove) {
    if (Array.isArray(cur) && typeof last === 'number') cur.splice(last, 1);
    else delete cur[last];
  } else {
    // An own property even for `__proto__`, as JSON.parse makes it.
    Object.defineProperty(cur, last, { value, enumerable: true, writable: true, configurable: true });
  }
}

/** Mutations of an object's metadata that its validation must catch (or accept). */
function mutateMetadata(r: Random, obj: Obj): void {
  const m = (
    obj.metadata !== null && typeof obj.metadata === 'object' && !Array.isArray(obj.metadata)
      ? obj.metadata
      : {}
  ) as Obj;
  obj.metadata = m;
  switch (r.int(14)) {
    case 0:
      m.name = r.pick(BAD_NAMES).replace(/%../g, '');
      break;
    case 1:
      m.labels = {
        [r.pick(['a b', '-x', 'x'.repeat(64), 'ex.com/', '/k', 'UPPER.com/k', 'ok'])]: r.pick([
          'v',
          'bad value',
          'x'.repeat(64),
          '-v',
          '',
        ]),
      };
      break;
    case 2:
      m.annotations = { [r.pick(['a b', 'ok', 'x'.repeat(300), 'Ex.COM/k'])]: 'v' };
      break;
    case 3:
      m.annotations = { big: 'x'.repeat(r.pick([1000, 262_144, 300_000])) };
      break;
    case 4:
      m.finalizers = r.pick([['example.com/f'], ['bad finalizer'], ['kubernetes'], 'x', [1]]);
      break;
    case 5:
      m.ownerReferences = r.pick([
        [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'a', uid: '1234' }],
        [{}],
        [
          { apiVersion: 'v1', kind: 'ConfigMap', name: 'a', uid: 'u', controller: true },
          { apiVersion: 'v1', kind: 'Secret', name: 'b', uid: 'v', controller: true },
        ],
        'x',
      ]);
      break;
    case 6:
      delete m.name;
      m.generateName = r.pick(['gen-', 'Gen_', '', 'x'.repeat(300), 5]);
      break;
    case 7:
      m.resourceVersion = r.pick(['1', '999999', 'abc', '-1', '', '0', 7]);
      break;
    case 8:
      m.uid = r.pick(['not-a-uid', '', 42]);
      m.creationTimestamp = r.pick(['yesterday', 5, null]);
      break;
    case 9:
      m.namespace = r.pick(['other', 'default', 'fuzz-a', '', 'Bad_NS']);
      break;
    case 10:
      m.deletionTimestamp = '2020-01-01T00:00:00Z';
      m.deletionGracePeriodSeconds = r.pick([0, -1, 30]);
      break;
    case 11:
      m.generation = r.pick([7, -1, 'x']);
      break;
    case 12:
      m.managedFields = r.pick([
        [{ manager: 'x', operation: 'Apply', fieldsV1: {} }],
        'x',
        [{ operation: 'Nope' }],
      ]);
      break;
    default:
      obj.metadata = r.pick([null, 'x', [], 5]);
  }
}

/** An object of `spec` with 0–3 random mutations. */
function mutatedObject(r: Random, spec: KindSpec, name: string, wrongTypeMeta: boolean): Obj {
  const obj: Obj = { apiVersion: spec.apiVersion, kind: spec.kind, ...spec.sample(name) };
  if (wrongTypeMeta) {
    if (r.chance(0.5)) obj.apiVersion = r.pick(['v2', 'apps/v1', '', 'nope/v1', 5, null]);
    else obj.kind = r.pick(['Secret', 'Pod', '', 'configmap', 7, null]);
  }
  const n = r.pick([0, 0, 1, 1, 2, 3]);
  for (let i = 0; i < n; i++) {
    const all = paths(obj);
    switch (r.int(6)) {
      case 0:
        mutateMetadata(r, obj);
        break;
      case 1:
      case 2:
        if (all.length > 0) setAt(obj, r.pick(all), randomValue(r));
        break;
      case 3:
        if (all.length > 0) setAt(obj, r.pick(all), undefined, true);
        break;
      case 4: {
        const target = all.length > 0 && r.chance(0.7) ? r.pick(all) : [];
        const key = r.pick([
          'unknownField',
          '__proto__',
          'constructor',
          'prototype',
          'toString',
          '',
          'status',
          'spec',
        ]);
        setAt(obj, [...target, key], randomValue(r));
        break;
      }
      default:
        obj.status = r.pick([
          { phase: 'Running' },
          { replicas: 5 },
          'x',
          null,
          { conditions: [{ type: 'Ready', status: 'True' }] },
        ]);
    }
  }
  return obj;
}

/** Text-level damage that no object can express: duplicate keys, big numbers, truncation… */
function damageText(r: Random, text: string): string {
  switch (r.int(10)) {
    case 0:
      return text.slice(0, r.int(text.length));
    case 1:
      return text.replace('{', `{"metadata":{"name":"dup"},"kind":"Dup",`);
    case 2:
      return text.replace(/:\s*(\d+)/, ':1e400');
    case 3:
      return text.replace(/:\s*(\d+)/, ':123456789012345678901234567890');
    case 4:
      return text.replace('{', '{"__proto__":{"polluted":true},');
    case 5:
      return text.replace(/"([a-z]+)":/, '"$1":1,"$1":');
    case 6:
      return `${text}garbage`;
    case 7:
      return r.pick(['', ' ', 'null', '[]', '"str"', '123', 'true', '{', '}', '{"a":}', '\ufeff{}', '[{}]']);
    case 8:
      return text.replace(/"/, "'");
    default:
      return `${'['.repeat(r.pick([100, 5000, 20_000]))}${']'.repeat(r.pick([100, 5000, 20_000]))}`;
  }
}

function jsonPatchOps(r: Random): unknown[] {
  const ops: unknown[] = [];
  const n = 1 + r.int(3);
  for (let i = 0; i < n; i++) {
    const path = r.pick([
      '/metadata/labels/x',
      '/metadata/labels',
      '/metadata/annotations/a~1b',
      '/metadata/finalizers/-',
      '/metadata/name',
      '/metadata/resourceVersion',
      '/spec/replicas',
      '/spec/containers/0/image',
      '/spec/containers/5',
      '/data/key',
      '/data',
      '/status',
      '',
      '/',
      'no-slash',
      '/~2',
      '/a/b/c/d',
      '/spec/template/spec/containers/-',
    ]);
    const op = r.pick(['add', 'remove', 'replace', 'test', 'move', 'copy', 'nope', 5]);
    ops.push(
      r.chance(0.9)
        ? { op, path, value: randomValue(r), from: r.pick(['/metadata/labels', '/data/key', '/x', 5]) }
        : randomValue(r),
    );
  }
  return ops;
}

function patchBody(r: Random, type: string, spec: KindSpec, name: string): unknown {
  if (type === 'application/json-patch+json') return r.chance(0.9) ? jsonPatchOps(r) : randomValue(r);
  const obj = mutatedObject(r, spec, name, r.chance(0.1));
  if (type === 'application/strategic-merge-patch+json' && r.chance(0.5)) {
    obj.spec = {
      containers: [{ name: 'app', $patch: r.pick(['delete', 'replace', 'merge', 'nope']) }],
      $retainKeys: r.pick([['containers'], 'x', [5]]),
      '$setElementOrder/containers': r.pick([[{ name: 'app' }], 'x']),
    };
    obj.metadata = {
      $deleteFromPrimitiveList: { finalizers: ['a'] },
      labels: { $patch: r.pick(['replace', 'delete']) },
    };
  }
  if (r.chance(0.3)) {
    // A merge patch keeps only a few fields of an object.
    const keep = r.pick(['metadata', 'data', 'spec', 'status']);
    return { [keep]: obj[keep] ?? randomValue(r) };
  }
  return obj;
}

function deleteOptions(r: Random): unknown {
  return r.pick([
    { propagationPolicy: r.pick(['Foreground', 'Background', 'Orphan', 'Nope', 5]) },
    { preconditions: { uid: r.pick(['x', '']), resourceVersion: r.pick(['1', 'abc', 5]) } },
    { gracePeriodSeconds: r.pick([0, -5, 30, 'x', 1e20]) },
    { orphanDependents: r.pick([true, false, 'x']) },
    { dryRun: r.pick([['All'], ['Nope'], 'All']) },
    { kind: 'DeleteOptions', apiVersion: 'v1' },
    [],
    'x',
  ]);
}

/** Whether a path's query asks for a watch, as the apiserver reads `watch` (only 0 and false are false). */
function watchParam(path: string): boolean {
  const q = path.indexOf('?');
  if (q < 0) return false;
  const v = new URLSearchParams(path.slice(q + 1)).get('watch');
  return v !== null && v !== '0' && v.toLowerCase() !== 'false';
}

function queryFor(r: Random, verb: 'list' | 'watch' | 'write' | 'get' | 'delete'): string {
  const q: string[] = [];
  const add = (k: string, v: string) => q.push(`${k}=${encodeURIComponent(v)}`);
  if (verb === 'list' || verb === 'watch' || verb === 'delete') {
    if (r.chance(0.3)) add('labelSelector', r.pick(SELECTORS));
    if (r.chance(0.2)) add('fieldSelector', r.pick(FIELD_SELECTORS));
  }
  if (verb === 'list') {
    if (r.chance(0.3)) add('limit', r.pick(['1', '2', '0', '-1', 'abc', '1e3', '99999999999999999999', '']));
    if (r.chance(0.15))
      add(
        'continue',
        r.pick([
          'garbage',
          '',
          Buffer.from('{"v":"meta.k8s.io/v1","rv":1,"start":"a"}').toString('base64url'),
          Buffer.from('{"v":"meta.k8s.io/v1","rv":-5,"start":"../../x"}').toString('base64url'),
          Buffer.from('{"v":"meta.k8s.io/v1","rv":99999999,"start":"/"}').toString('base64url'),
          Buffer.from('{"v":"meta.k8s.io/v1","rv":"1","start":5}').toString('base64url'),
          Buffer.from('{"v":"meta.k8s.io/v1","rv":1e400,"start":""}').toString('base64url'),
          '%%%%',
        ]),
      );
    if (r.chance(0.2))
      add('resourceVersion', r.pick(['0', '1', '', 'abc', '-1', '99999999', '1.5', '18446744073709551616']));
    if (r.chance(0.15)) add('resourceVersionMatch', r.pick(['Exact', 'NotOlderThan', 'Nope', '']));
    if (r.chance(0.1)) add('includeObject', r.pick(['None', 'Object', 'Metadata', 'Nope']));
  }
  if (verb === 'watch') {
    // Watches end on their own when asked for 1 s; the client closes the others.
    if (r.chance(0.1)) add('timeoutSeconds', '1');
    else if (r.chance(0.5)) add('timeoutSeconds', r.pick(['0', 'abc', '-1', '100']));
    if (r.chance(0.4)) add('resourceVersion', r.pick(['0', '1', '', 'abc', '99999999', '2', '5']));
    if (r.chance(0.3)) add('allowWatchBookmarks', r.pick(['true', 'false', 'x']));
    if (r.chance(0.2)) add('sendInitialEvents', r.pick(['true', 'false', 'x']));
    if (r.chance(0.2)) add('resourceVersionMatch', r.pick(['NotOlderThan', 'Exact', 'x']));
  }
  if (verb === 'write' || verb === 'delete') {
    if (r.chance(0.15)) add('dryRun', r.pick(['All', 'Nope', '']));
    if (r.chance(0.2)) add('fieldValidation', r.pick(['Strict', 'Warn', 'Ignore', 'Nope']));
    if (r.chance(0.05)) add('fieldManager', r.pick(['fuzz', '', 'x'.repeat(200)]));
    if (r.chance(0.05)) add('force', r.pick(['true', 'x']));
  }
  if (verb === 'delete') {
    if (r.chance(0.2)) add('propagationPolicy', r.pick(['Foreground', 'Background', 'Orphan', 'Nope']));
    if (r.chance(0.1)) add('gracePeriodSeconds', r.pick(['0', '-1', 'x', '30']));
  }
  if (r.chance(0.05)) add('pretty', r.pick(['true', 'x']));
  if (r.chance(0.03)) q.push(r.pick(['%zz', '&&&', '=x', 'a=%ff', 'watch']));
  return q.length > 0 ? `?${q.join('&')}` : '';
}

function resourcePath(r: Random, spec: KindSpec, ns: string, name: string | undefined, sub: string): string {
  let p = spec.prefix;
  if (spec.namespaced && !r.chance(0.05)) p += `/namespaces/${ns}`;
  p += `/${spec.resource}`;
  if (name !== undefined) p += `/${name}`;
  if (sub) p += `/${sub}`;
  return p;
}

function encodeBody(r: Random, value: unknown, type: string, damage: boolean): Buffer {
  let text: string;
  if (type.includes('yaml') && r.chance(0.7)) {
    try {
      text = toYaml(value);
    } catch {
      text = JSON.stringify(value) ?? 'null';
    }
  } else text = JSON.stringify(value) ?? 'null';
  if (damage) text = damageText(r, text);
  if (r.chance(0.01)) return Buffer.concat([Buffer.from(text), Buffer.from([0xff, 0xfe, 0x00, 0xc3])]);
  return Buffer.from(text);
}

/** The `index`-th request of the fuzz run with `seed`. */
export function generateRequest(seed: number, index: number): FuzzRequest {
  const r = new Random(seed, index);
  const spec = r.pick(KINDS);
  const ns = r.chance(0.9) ? r.pick(FUZZ_NAMESPACES) : r.pick(BAD_NAMESPACES);
  const name = r.chance(0.92) ? r.pick(NAMES) : r.pick(BAD_NAMES);
  const headers: Record<string, string> = { Accept: r.chance(0.8) ? 'application/json' : r.pick(ACCEPTS) };
  let method: string;
  let path: string;
  let body: Buffer | undefined;
  let watch = false;
  let contentType: string | undefined;
  const roll = r.int(100);

  if (roll < 5) {
    // Not a resource: discovery, health, OpenAPI and nonsense, with any verb.
    method = r.pick(['GET', 'GET', 'GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']);
    path = r.pick([...NON_RESOURCE, ...GROUPS]);
    if (method !== 'GET') body = Buffer.from('{}');
  } else if (roll < 10) {
    // Random path segments under the API prefixes.
    method = r.pick(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);
    const segs = [r.pick(GROUPS)];
    if (r.chance(0.5)) segs.push(`namespaces/${ns}`);
    segs.push(r.pick(RESOURCES));
    if (r.chance(0.6)) segs.push(name);
    if (r.chance(0.4)) segs.push(r.pick(SUBRESOURCES));
    path = segs.join('/').replace(/\/+$/, '') + queryFor(r, 'get');
    // A stray `watch` (true, as the apiserver reads an empty value) would make an unpredictable
    // path a watch, which the harness must know to read; keep these requests plain.
    path = path.replace(/([?&])watch(?=&|$)/, '$1nowatch');
    if (method !== 'GET' && method !== 'DELETE') {
      contentType = r.pick(CONTENT_TYPES);
      body = encodeBody(r, mutatedObject(r, spec, name, false), contentType, r.chance(0.2));
    }
  } else if (roll < 22) {
    method = 'GET';
    path = resourcePath(r, spec, ns, undefined, '') + queryFor(r, 'list');
    // A stray `watch` with an empty value is a watch (Convert_Slice_string_To_bool).
    watch = watchParam(path);
  } else if (roll < 30) {
    method = 'GET';
    const sub = r.chance(0.2) ? r.pick([...spec.subresources, 'nope']) : '';
    path = resourcePath(r, spec, ns, name, sub) + queryFor(r, 'get');
  } else if (roll < 36) {
    method = 'GET';
    const byPath = r.chance(0.3);
    const named = r.chance(0.2);
    // `?watch=true` on an object's path is a get (RequestInfoFactory reads `watch` only without
    // a name); the `/watch/` path prefix watches a single object.
    watch = byPath || !named;
    const base = resourcePath(r, spec, ns, named ? name : undefined, '');
    const q = queryFor(r, 'watch');
    path = byPath
      ? base.replace(spec.prefix, `${spec.prefix}/watch`) + q
      : `${base}${q ? `${q}&` : '?'}watch=${r.pick(['true', '1'])}`;
  } else if (roll < 60) {
    method = 'POST';
    path = resourcePath(r, spec, ns, r.chance(0.05) ? name : undefined, '') + queryFor(r, 'write');
    contentType = r.chance(0.85) ? 'application/json' : r.pick(CONTENT_TYPES);
    const obj = mutatedObject(r, spec, name, r.chance(0.08));
    body = encodeBody(r, obj, contentType, r.chance(0.1));
  } else if (roll < 72) {
    method = 'PUT';
    const sub = r.chance(0.25) ? r.pick(spec.subresources.length > 0 ? spec.subresources : ['status']) : '';
    path = resourcePath(r, spec, ns, r.chance(0.95) ? name : undefined, sub) + queryFor(r, 'write');
    contentType = r.chance(0.85) ? 'application/json' : r.pick(CONTENT_TYPES);
    let obj: Obj = mutatedObject(r, spec, name, r.chance(0.08));
    if (sub === 'scale')
      obj = {
        apiVersion: 'autoscaling/v1',
        kind: 'Scale',
        metadata: { name },
        spec: { replicas: r.pick([0, 3, -1, 'x', 1.5]) },
      };
    body = encodeBody(r, obj, contentType, r.chance(0.1));
  } else if (roll < 88) {
    method = 'PATCH';
    const sub = r.chance(0.2) ? r.pick(spec.subresources.length > 0 ? spec.subresources : ['status']) : '';
    path = resourcePath(r, spec, ns, name, sub) + queryFor(r, 'write');
    contentType = r.chance(0.9)
      ? r.pick([
          'application/merge-patch+json',
          'application/json-patch+json',
          'application/strategic-merge-patch+json',
          'application/apply-patch+yaml',
        ])
      : r.pick(CONTENT_TYPES);
    body = encodeBody(r, patchBody(r, contentType, spec, name), contentType, r.chance(0.08));
  } else {
    method = 'DELETE';
    const collection = r.chance(0.1);
    path = resourcePath(r, spec, ns, collection ? undefined : name, '') + queryFor(r, 'delete');
    // Deleting every CRD at once would end the fuzzing of custom resources early.
    if (collection && spec.resource === 'customresourcedefinitions')
      path += `${path.includes('?') ? '&' : '?'}labelSelector=fuzz%3Dcrd`;
    if (r.chance(0.3)) {
      contentType = 'application/json';
      body = encodeBody(r, deleteOptions(r), contentType, r.chance(0.1));
    }
  }

  if (body && r.chance(0.002)) body = Buffer.alloc(3 * 1024 * 1024 + 1 + r.int(1000), 0x20);
  if (contentType !== undefined && contentType !== '') headers['Content-Type'] = contentType;
  if (r.chance(0.01)) headers.Authorization = r.pick(['Bearer wrong', 'Basic eDp5', 'Bearer', '']);
  const describe = `${method} ${path} [${contentType ?? '-'}] accept=${headers.Accept}${
    body ? ` body(${body.length})=${body.subarray(0, 300).toString('utf8')}` : ''
  }`;
  // Characters outside the URL alphabet are sent percent-encoded, as any HTTP client does.
  path = path.replace(/[^\x21-\x7e]/gu, (c) => encodeURIComponent(c));
  return { method, path, headers, ...(body && { body }), watch, describe };
}
