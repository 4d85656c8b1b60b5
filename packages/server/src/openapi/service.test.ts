import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { Obj } from './builtin.js';
import { findUnknownFields } from './field-validation.js';
import type { OpenApiResource } from './paths.js';
import { OpenApiService, parseAccept } from './service.js';

const ALL_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

const cronTabSchema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      description: 'The spec of a CronTab.',
      properties: {
        cronSpec: { type: 'string', description: 'When to run.' },
        replicas: { type: 'integer', nullable: true },
        extra: {
          type: 'object',
          'x-kubernetes-preserve-unknown-fields': true,
          properties: { a: { type: 'string' } },
        },
        port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
      },
      required: ['cronSpec', 'replicas'],
    },
    status: { type: 'object', properties: { replicas: { type: 'integer' } } },
  },
};

function builtinResources(): OpenApiResource[] {
  return [
    {
      group: '',
      version: 'v1',
      kind: 'Namespace',
      resource: 'namespaces',
      namespaced: false,
      verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
      subresources: ['status'],
      definition: 'io.k8s.api.core.v1.Namespace',
    },
    {
      group: '',
      version: 'v1',
      kind: 'ConfigMap',
      resource: 'configmaps',
      namespaced: true,
      verbs: ALL_VERBS,
      subresources: [],
      definition: 'io.k8s.api.core.v1.ConfigMap',
    },
    {
      group: '',
      version: 'v1',
      kind: 'Pod',
      resource: 'pods',
      namespaced: true,
      verbs: ALL_VERBS,
      subresources: ['status', 'log', 'exec'],
      definition: 'io.k8s.api.core.v1.Pod',
    },
    {
      group: 'apps',
      version: 'v1',
      kind: 'Deployment',
      resource: 'deployments',
      namespaced: true,
      verbs: ALL_VERBS,
      subresources: ['status', 'scale'],
      definition: 'io.k8s.api.apps.v1.Deployment',
    },
    {
      group: 'rbac.authorization.k8s.io',
      version: 'v1',
      kind: 'ClusterRole',
      resource: 'clusterroles',
      namespaced: false,
      verbs: ALL_VERBS,
      subresources: [],
      definition: 'io.k8s.api.rbac.v1.ClusterRole',
    },
  ];
}

const cronTab: OpenApiResource = {
  group: 'stable.example.com',
  version: 'v1',
  kind: 'CronTab',
  resource: 'crontabs',
  namespaced: true,
  verbs: ALL_VERBS,
  subresources: ['status', 'scale'],
  schema: cronTabSchema,
};

const none = new URLSearchParams();

function json(body: Buffer | string): Obj {
  return JSON.parse(body.toString()) as Obj;
}

function sha512(body: Buffer | string): string {
  return createHash('sha512').update(body).digest('hex').toUpperCase();
}

function get(service: OpenApiService, url: string, headers: Record<string, string> = {}) {
  const u = new URL(url, 'http://localhost');
  const answer = service.handle(u.pathname, u.searchParams, headers);
  if (!answer) throw new Error(`${url} not handled`);
  return answer;
}

function discovery(service: OpenApiService): Record<string, string> {
  const paths = json(get(service, '/openapi/v3').body).paths as Record<string, { serverRelativeURL: string }>;
  return Object.fromEntries(Object.entries(paths).map(([k, v]) => [k, v.serverRelativeURL]));
}

function groupVersion(service: OpenApiService, key: string): Obj {
  const url = discovery(service)[key];
  if (!url) throw new Error(`${key} not in discovery`);
  return json(get(service, url).body);
}

function collectRefs(value: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(value)) for (const v of value) collectRefs(v, out);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string') out.add(v);
      else collectRefs(v, out);
    }
  }
  return out;
}

type Op = {
  operationId: string;
  parameters?: { name: string; in: string }[];
  requestBody?: { content: Record<string, unknown> };
  'x-kubernetes-action': string;
  'x-kubernetes-group-version-kind': Record<string, string>;
};

function op(doc: Obj, path: string, method: string): Op {
  const item = (doc.paths as Record<string, Record<string, Op>>)[path];
  const operation = item?.[method];
  if (!operation) throw new Error(`no ${method} ${path}`);
  return operation;
}

describe('OpenApiService /openapi/v3', () => {
  const service = new OpenApiService(() => [...builtinResources(), cronTab]);

  it('lists every group-version with a hash, and discovery documents', () => {
    const paths = discovery(service);
    expect(Object.keys(paths).sort()).toEqual([
      'api',
      'api/v1',
      'apis',
      'apis/apps',
      'apis/apps/v1',
      'apis/rbac.authorization.k8s.io',
      'apis/rbac.authorization.k8s.io/v1',
      'apis/stable.example.com',
      'apis/stable.example.com/v1',
      'version',
    ]);
    const body = get(service, paths['apis/apps/v1'] as string).body;
    expect(paths['apis/apps/v1']).toBe(`/openapi/v3/apis/apps/v1?hash=${sha512(body)}`);
  });

  it('answers with ETag and honours If-None-Match', () => {
    const first = get(service, '/openapi/v3');
    expect(first.status).toBe(200);
    expect(first.headers['Content-Type']).toBe('application/json');
    expect(first.headers.ETag).toBe(`"${sha512(first.body)}"`);
    expect(Buffer.isBuffer(first.body)).toBe(true);
    const again = get(service, '/openapi/v3', { 'if-none-match': first.headers.ETag as string });
    expect(again.status).toBe(304);
    expect(again.body).toBe('');
  });

  it('serves a group-version immutable under its hash, and redirects a stale hash', () => {
    const url = discovery(service)['apis/apps/v1'] as string;
    const hash = url.split('hash=')[1] as string;
    const current = get(service, url, { accept: 'application/json' });
    expect(current.status).toBe(200);
    expect(current.headers['Cache-Control']).toBe('public, immutable');
    expect(current.headers.Expires).toMatch(/GMT$/);
    expect(current.headers.ETag).toBe(`"${hash}"`);
    expect(current.headers.Vary).toBe('Accept');

    const stale = get(service, '/openapi/v3/apis/apps/v1?hash=0123');
    expect(stale.status).toBe(301);
    expect(stale.headers.Location).toBe(url);

    const plain = get(service, '/openapi/v3/apis/apps/v1');
    expect(plain.status).toBe(200);
    expect(plain.headers['Cache-Control']).toBeUndefined();
    expect(get(service, '/openapi/v3/apis/apps/v1', { 'if-none-match': `"${hash}"` }).status).toBe(304);
  });

  it('negotiates Accept: JSON or wildcard; protobuf and others are 406', () => {
    const url = '/openapi/v3/api/v1';
    expect(get(service, url, { accept: '*/*' }).status).toBe(200);
    expect(get(service, url, { accept: 'application/*' }).status).toBe(200);
    expect(
      get(service, url, { accept: 'application/com.github.proto-openapi.spec.v3.v1.0+protobuf' }).status,
    ).toBe(406);
    expect(get(service, url, { accept: 'text/html' }).status).toBe(406);
    expect(get(service, url, { accept: 'text/html, application/json;q=0.5' }).status).toBe(200);
  });

  it('answers 404 for an unknown group-version and leaves other paths alone', () => {
    expect(get(service, '/openapi/v3/apis/nope/v1').status).toBe(404);
    expect(service.handle('/apis/apps/v1', none, {})).toBeUndefined();
    expect(service.handle('/openapi/v2x', none, {})).toBeUndefined();
  });

  it('documents the REST operations of a namespaced kind like kube-apiserver', () => {
    const doc = groupVersion(service, 'apis/apps/v1');
    expect(doc.openapi).toBe('3.0.0');
    const deploymentGvk = { group: 'apps', kind: 'Deployment', version: 'v1' };
    const collection = '/apis/apps/v1/namespaces/{namespace}/deployments';
    const item = `${collection}/{name}`;
    const expected: [string, string, string, string][] = [
      [collection, 'get', 'listAppsV1NamespacedDeployment', 'list'],
      [collection, 'post', 'createAppsV1NamespacedDeployment', 'post'],
      [collection, 'delete', 'deleteAppsV1CollectionNamespacedDeployment', 'deletecollection'],
      [item, 'get', 'readAppsV1NamespacedDeployment', 'get'],
      [item, 'put', 'replaceAppsV1NamespacedDeployment', 'put'],
      [item, 'patch', 'patchAppsV1NamespacedDeployment', 'patch'],
      [item, 'delete', 'deleteAppsV1NamespacedDeployment', 'delete'],
      [`${item}/status`, 'patch', 'patchAppsV1NamespacedDeploymentStatus', 'patch'],
      ['/apis/apps/v1/deployments', 'get', 'listAppsV1DeploymentForAllNamespaces', 'list'],
      [
        '/apis/apps/v1/watch/namespaces/{namespace}/deployments',
        'get',
        'watchAppsV1NamespacedDeploymentList',
        'watchlist',
      ],
      [
        '/apis/apps/v1/watch/namespaces/{namespace}/deployments/{name}',
        'get',
        'watchAppsV1NamespacedDeployment',
        'watch',
      ],
    ];
    for (const [path, method, id, action] of expected) {
      const operation = op(doc, path, method);
      expect(operation.operationId).toBe(id);
      expect(operation['x-kubernetes-action']).toBe(action);
      expect(operation['x-kubernetes-group-version-kind']).toEqual(deploymentGvk);
    }
    const scale = op(doc, `${item}/scale`, 'put');
    expect(scale.operationId).toBe('replaceAppsV1NamespacedDeploymentScale');
    expect(scale['x-kubernetes-group-version-kind']).toEqual({
      group: 'autoscaling',
      kind: 'Scale',
      version: 'v1',
    });

    const names = (o: Op) => (o.parameters ?? []).map((p) => p.name);
    expect(names(op(doc, item, 'patch'))).toEqual(['dryRun', 'fieldManager', 'fieldValidation', 'force']);
    expect(names(op(doc, collection, 'post'))).toEqual(['dryRun', 'fieldManager', 'fieldValidation']);
    expect(names(op(doc, item, 'delete'))).toEqual([
      'dryRun',
      'gracePeriodSeconds',
      'orphanDependents',
      'propagationPolicy',
    ]);
    expect(names(op(doc, collection, 'get'))).toContain('labelSelector');
    const itemParams = (doc.paths as Record<string, { parameters: { name: string; in: string }[] }>)[item]
      ?.parameters;
    expect(itemParams?.map((p) => `${p.in}:${p.name}`)).toEqual([
      'path:name',
      'path:namespace',
      'query:pretty',
    ]);
    expect(Object.keys(op(doc, item, 'patch').requestBody?.content ?? {})).toContain(
      'application/strategic-merge-patch+json',
    );
  });

  it('documents what DELETE answers: the object for some kinds, a Status for most', () => {
    const content = (doc: Obj, path: string) =>
      JSON.stringify((op(doc, path, 'delete') as unknown as { responses: Obj }).responses['200']);
    const core = groupVersion(service, 'api/v1');
    expect(content(core, '/api/v1/namespaces/{namespace}/pods/{name}')).toContain('io.k8s.api.core.v1.Pod"');
    expect(content(core, '/api/v1/namespaces/{namespace}/configmaps/{name}')).toContain('meta.v1.Status"');
    const overridden = new OpenApiService(() =>
      builtinResources().map((r) => (r.kind === 'ConfigMap' ? { ...r, returnDeletedObject: true } : r)),
    );
    expect(
      content(groupVersion(overridden, 'api/v1'), '/api/v1/namespaces/{namespace}/configmaps/{name}'),
    ).toContain('io.k8s.api.core.v1.ConfigMap"');
  });

  it('puts fieldValidation on every PATCH (kubectl checks them all for the GVK)', () => {
    for (const key of [
      'api/v1',
      'apis/apps/v1',
      'apis/rbac.authorization.k8s.io/v1',
      'apis/stable.example.com/v1',
    ]) {
      const doc = groupVersion(service, key);
      let patches = 0;
      for (const item of Object.values(doc.paths as Record<string, Record<string, Op>>)) {
        if (!item.patch) continue;
        patches++;
        expect(item.patch.parameters?.some((p) => p.name === 'fieldValidation' && p.in === 'query')).toBe(
          true,
        );
      }
      expect(patches).toBeGreaterThan(0);
    }
  });

  it('documents cluster-scoped kinds without a namespace and only the verbs they have', () => {
    const doc = groupVersion(service, 'api/v1');
    expect(op(doc, '/api/v1/namespaces', 'post').operationId).toBe('createCoreV1Namespace');
    expect(op(doc, '/api/v1/namespaces/{name}/status', 'get').operationId).toBe('readCoreV1NamespaceStatus');
    expect(op(doc, '/api/v1/watch/namespaces/{name}', 'get').operationId).toBe('watchCoreV1Namespace');
    const paths = doc.paths as Record<string, Record<string, unknown>>;
    expect(paths['/api/v1/namespaces']?.delete).toBeUndefined();
    expect(paths['/api/v1/namespaces/{namespace}/pods/{name}/log']).toBeUndefined();
    expect(op(doc, '/api/v1/namespaces/{namespace}/configmaps', 'post').operationId).toBe(
      'createCoreV1NamespacedConfigMap',
    );
    const rbac = groupVersion(service, 'apis/rbac.authorization.k8s.io/v1');
    expect(op(rbac, '/apis/rbac.authorization.k8s.io/v1/clusterroles', 'delete').operationId).toBe(
      'deleteRbacAuthorizationV1CollectionClusterRole',
    );
    expect(
      (op(rbac, '/apis/rbac.authorization.k8s.io/v1/clusterroles', 'get') as unknown as Obj).tags,
    ).toEqual(['rbacAuthorization_v1']);
  });

  it('carries every definition its refs need, with x-kubernetes-group-version-kind', () => {
    for (const key of Object.keys(discovery(service))) {
      const doc = groupVersion(service, key);
      const schemas = (doc.components as { schemas: Record<string, Obj> }).schemas;
      for (const ref of collectRefs(doc)) {
        expect(ref.startsWith('#/components/schemas/')).toBe(true);
        expect(schemas[ref.slice('#/components/schemas/'.length)], `${key}: ${ref}`).toBeDefined();
      }
    }
    const schemas = (groupVersion(service, 'apis/apps/v1').components as { schemas: Record<string, Obj> })
      .schemas;
    expect(schemas['io.k8s.api.apps.v1.Deployment']?.['x-kubernetes-group-version-kind']).toEqual([
      { group: 'apps', kind: 'Deployment', version: 'v1' },
    ]);
    expect(schemas['io.k8s.api.autoscaling.v1.Scale']).toBeDefined();
    expect(schemas['io.k8s.api.core.v1.PodSpec']).toBeDefined();
  });

  it('publishes a custom resource under its reverse-DNS name, without strategic merge patch', () => {
    const doc = groupVersion(service, 'apis/stable.example.com/v1');
    const schemas = (doc.components as { schemas: Record<string, Obj> }).schemas;
    const def = schemas['com.example.stable.v1.CronTab'] as Obj;
    expect(def['x-kubernetes-group-version-kind']).toEqual([
      { group: 'stable.example.com', kind: 'CronTab', version: 'v1' },
    ]);
    const props = def.properties as Record<string, Obj>;
    expect(props.metadata?.allOf).toEqual([
      { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' },
    ]);
    expect(props.apiVersion?.type).toBe('string');
    expect(((props.spec as Obj).properties as Obj).cronSpec).toEqual({
      type: 'string',
      description: 'When to run.',
    });
    expect(schemas['com.example.stable.v1.CronTabList']?.['x-kubernetes-group-version-kind']).toEqual([
      { group: 'stable.example.com', kind: 'CronTabList', version: 'v1' },
    ]);
    const patch = op(doc, '/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}', 'patch');
    expect(patch.operationId).toBe('patchStableExampleComV1NamespacedCronTab');
    expect(Object.keys(patch.requestBody?.content ?? {}).sort()).toEqual([
      'application/apply-patch+yaml',
      'application/json-patch+json',
      'application/merge-patch+json',
    ]);
  });
});

describe('OpenApiService /openapi/v2', () => {
  const service = new OpenApiService(() => [...builtinResources(), cronTab], { version: 'v1.32.4' });

  it('serves Swagger 2.0 JSON with #/definitions refs that all resolve', () => {
    const answer = get(service, '/openapi/v2', { accept: 'application/json' });
    expect(answer.status).toBe(200);
    expect(answer.headers.ETag).toBe(`"${sha512(answer.body)}"`);
    const doc = json(answer.body);
    expect(doc.swagger).toBe('2.0');
    expect(doc.info).toEqual({ title: 'Kubernetes', version: 'v1.32.4' });
    const definitions = doc.definitions as Record<string, Obj>;
    for (const ref of collectRefs(doc)) {
      expect(ref.startsWith('#/definitions/')).toBe(true);
      expect(definitions[ref.slice('#/definitions/'.length)], ref).toBeDefined();
    }
    const paths = doc.paths as Record<string, Record<string, Obj>>;
    const patch = paths['/apis/apps/v1/namespaces/{namespace}/deployments/{name}']?.patch as Obj;
    expect(patch.consumes).toContain('application/strategic-merge-patch+json');
    expect(patch.produces).toContain('application/json');
    const params = patch.parameters as Obj[];
    expect(params[0]).toEqual({
      in: 'body',
      name: 'body',
      required: true,
      schema: { $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch' },
    });
    expect(params.find((p) => p.name === 'fieldValidation')).toMatchObject({ in: 'query', type: 'string' });
    expect(patch['x-kubernetes-group-version-kind']).toEqual({
      group: 'apps',
      kind: 'Deployment',
      version: 'v1',
    });
    expect((patch.responses as Record<string, Obj>)['200']?.schema).toEqual({
      $ref: '#/definitions/io.k8s.api.apps.v1.Deployment',
    });
  });

  it('publishes custom resources the way apiextensions does for v2', () => {
    const doc = json(get(service, '/openapi/v2').body);
    const def = (doc.definitions as Record<string, Obj>)['com.example.stable.v1.CronTab'] as Obj;
    const props = def.properties as Record<string, Obj>;
    expect(props.metadata).toEqual({
      $ref: '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
      description: expect.stringContaining("Standard object's metadata") as unknown,
    });
    const spec = props.spec as Obj;
    const specProps = spec.properties as Record<string, Obj>;
    // nullable: no type, and no longer required; preserve-unknown-fields: no properties; no anyOf.
    expect(specProps.replicas).toEqual({});
    expect(spec.required).toEqual(['cronSpec']);
    expect(specProps.extra).toEqual({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
    expect(specProps.port).toEqual({ 'x-kubernetes-int-or-string': true });
  });

  it('serves the gnostic protobuf encoding with the same ETag', () => {
    const jsonAnswer = get(service, '/openapi/v2', { accept: 'application/json' });
    const answer = get(service, '/openapi/v2', {
      accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf',
    });
    expect(answer.status).toBe(200);
    expect(answer.headers['Content-Type']).toBe('application/com.github.proto-openapi.spec.v2.v1.0+protobuf');
    expect(answer.headers.ETag).toBe(jsonAnswer.headers.ETag);
    expect(
      get(service, '/openapi/v2', {
        accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf',
        'if-none-match': jsonAnswer.headers.ETag as string,
      }).status,
    ).toBe(304);

    const doc = decode(answer.body as Buffer);
    expect(text(doc.get(1)?.[0])).toBe('2.0');
    const info = message(doc.get(2)?.[0]);
    expect(text(info.get(2)?.[0])).toBe('v1.32.4');
    const definitions = new Map(
      (message(doc.get(9)?.[0]).get(1) ?? []).map((entry) => {
        const named = message(entry);
        return [text(named.get(1)?.[0]), message(named.get(2)?.[0])] as const;
      }),
    );
    const jsonDoc = json(jsonAnswer.body);
    expect([...definitions.keys()]).toEqual(Object.keys(jsonDoc.definitions as Obj));
    const deployment = definitions.get('io.k8s.api.apps.v1.Deployment');
    if (!deployment) throw new Error('no Deployment');
    expect(text(deployment.get(4)?.[0])).toBe(
      'Deployment enables declarative updates for Pods and ReplicaSets.',
    );
    const type = message(deployment.get(22)?.[0]);
    expect(text(type.get(1)?.[0])).toBe('object');
    const extension = message(deployment.get(31)?.[0]);
    expect(text(extension.get(1)?.[0])).toBe('x-kubernetes-group-version-kind');
    const yaml = text(message(extension.get(2)?.[0]).get(2)?.[0]);
    expect(JSON.parse(yaml)).toEqual([{ group: 'apps', kind: 'Deployment', version: 'v1' }]);
    const paths = message(doc.get(8)?.[0]).get(2) ?? [];
    expect(paths).toHaveLength(Object.keys(jsonDoc.paths as Obj).length);
  });
});

describe('OpenApiService lifecycle and schemas', () => {
  it('rebuilds after invalidate(), with new hashes where documents changed', () => {
    const resources = builtinResources();
    const service = new OpenApiService(() => resources);
    const before = discovery(service);
    resources.push(cronTab);
    expect(discovery(service)).toEqual(before);
    service.invalidate();
    const after = discovery(service);
    expect(after['apis/stable.example.com/v1']).toBeDefined();
    expect(after['apis/apps/v1']).toBe(before['apis/apps/v1']);
    resources.splice(resources.indexOf(cronTab), 1);
    service.invalidate();
    expect(discovery(service)['apis/stable.example.com/v1']).toBeUndefined();
    expect(get(service, after['apis/stable.example.com/v1'] as string).status).toBe(404);
  });

  it('hands out schemas for served kinds, custom resources and built-in subresource kinds', () => {
    const service = new OpenApiService(() => [...builtinResources(), cronTab]);
    const deployment = service.schemaFor('apps', 'v1', 'Deployment');
    expect(deployment?.definition).toBe('io.k8s.api.apps.v1.Deployment');
    expect(service.schemaFor('apps', 'v1', 'Deployment')).toBe(deployment);
    const scale = service.schemaFor('autoscaling', 'v1', 'Scale');
    expect(scale && findUnknownFields({ spec: { replicas: 1, replica: 2 } }, scale)).toEqual([
      'unknown field "spec.replica"',
    ]);
    const ct = service.schemaFor('stable.example.com', 'v1', 'CronTab');
    expect(ct?.structural).toBe(true);
    expect(ct && findUnknownFields({ spec: { cronSpec: 'x', nope: 1 } }, ct)).toEqual([
      'unknown field "spec.nope"',
    ]);
    expect(service.schemaFor('example.com', 'v1', 'Nope')).toBeUndefined();
  });

  it('orders Accept clauses by quality, then specificity', () => {
    expect(parseAccept('text/*;q=0.5, application/json, */*;q=0.1, text/html;q=0.5')).toEqual([
      { type: 'application', subtype: 'json' },
      { type: 'text', subtype: 'html' },
      { type: 'text', subtype: '*' },
      { type: '*', subtype: '*' },
    ]);
    expect(parseAccept(undefined)).toEqual([{ type: '*', subtype: '*' }]);
  });
});

// A minimal protobuf reader, to check the encoding independently of the encoder.
type Field = Buffer | number;

function decode(buf: Buffer): Map<number, Field[]> {
  const fields = new Map<number, Field[]>();
  let i = 0;
  const varint = () => {
    let result = 0;
    let shift = 1;
    for (;;) {
      const b = buf[i++] as number;
      result += (b & 0x7f) * shift;
      if (b < 0x80) return result;
      shift *= 128;
    }
  };
  while (i < buf.length) {
    const key = varint();
    const field = Math.floor(key / 8);
    const wire = key % 8;
    let value: Field;
    if (wire === 0) value = varint();
    else if (wire === 1) {
      value = buf.readDoubleLE(i);
      i += 8;
    } else if (wire === 2) {
      const len = varint();
      value = buf.subarray(i, i + len);
      i += len;
    } else throw new Error(`unexpected wire type ${wire}`);
    const list = fields.get(field) ?? [];
    list.push(value);
    fields.set(field, list);
  }
  return fields;
}

function message(field: Field | undefined): Map<number, Field[]> {
  if (!Buffer.isBuffer(field)) throw new Error('not a message');
  return decode(field);
}

function text(field: Field | undefined): string {
  if (!Buffer.isBuffer(field)) throw new Error('not bytes');
  return field.toString('utf8');
}
