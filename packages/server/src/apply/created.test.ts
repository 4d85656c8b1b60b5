import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { createdFieldsV1 } from './created.js';
import { STRIP, updateManagedFields } from './field-manager.js';
import { toFieldsV1 } from './fields-v1.js';
import { type Atom, builtinAtom, customResourceAtom, openApiAtom } from './schema.js';
import { FieldSet } from './set.js';
import { Updater } from './updater.js';
import type { Obj } from './value.js';

/** The general path: compare with the type meta, update ownership, strip, serialize. */
function viaUpdater(
  obj: Obj,
  atom: Atom,
  ignored: FieldSet | undefined,
  zero: Obj = { apiVersion: 'x/v1', kind: 'X' },
): string {
  const { managers } = new Updater(atom, ignored).update(zero, obj, 'x/v1', new Map(), 'm');
  const vs = managers.get('m');
  const set = vs ? vs.set.difference(STRIP) : new FieldSet();
  return set.empty() ? 'null' : JSON.stringify(toFieldsV1(set));
}

function direct(obj: Obj, atom: Atom, ignored: FieldSet | undefined): string | undefined {
  const out = createdFieldsV1(obj, atom, ignored, STRIP);
  return out === undefined ? undefined : JSON.stringify(out);
}

/** Asserts the walk writes the general path's bytes; returns whether it handled the object. */
function same(obj: Obj, atom: Atom, ignored?: FieldSet, zero?: Obj): boolean {
  const want = viaUpdater(obj, atom, ignored, zero);
  const got = direct(obj, atom, ignored);
  if (got !== undefined) expect(got).toBe(want);
  return got !== undefined;
}

const STATUS = FieldSet.of([{ field: 'status' }]);

const kitchenSink = parse(
  readFileSync(
    new URL('../../../kubeloop/src/schema/testdata/kitchensink-crd.yaml', import.meta.url),
    'utf8',
  ),
) as { spec: { versions: { schema: { openAPIV3Schema: Obj } }[] } };

/** A custom resource schema with every merge semantics the walk must reproduce. */
const crSchema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        image: { type: 'string' },
        replicas: { type: 'integer' },
        port: { 'x-kubernetes-int-or-string': true },
        when: { type: 'string', format: 'date-time' },
        env: { type: 'object', additionalProperties: { type: 'string' } },
        selector: {
          type: 'object',
          'x-kubernetes-map-type': 'atomic',
          properties: { app: { type: 'string' } },
        },
        args: { type: 'array', items: { type: 'string' } },
        tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
        nums: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'integer' } },
        atomicList: { type: 'array', 'x-kubernetes-list-type': 'atomic', items: { type: 'string' } },
        containers: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: {
            type: 'object',
            properties: {
              name: { type: 'string' },
              image: { type: 'string' },
              ports: {
                type: 'array',
                'x-kubernetes-list-type': 'map',
                'x-kubernetes-list-map-keys': ['port', 'protocol'],
                items: {
                  type: 'object',
                  properties: {
                    port: { type: 'integer' },
                    protocol: { type: 'string', default: 'TCP' },
                  },
                },
              },
            },
          },
        },
        config: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        template: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          'x-kubernetes-preserve-unknown-fields': true,
        },
        anything: {},
        nested: {
          type: 'object',
          properties: {
            deep: {
              type: 'object',
              properties: { leaf: { type: 'string' }, more: { type: 'object', additionalProperties: true } },
            },
          },
        },
      },
    },
    status: { type: 'object', properties: { ready: { type: 'boolean' }, phase: { type: 'string' } } },
  },
};
const crAtom = customResourceAtom(crSchema as never);

const meta = (extra: Obj = {}): Obj => ({
  name: 'x',
  namespace: 'default',
  uid: 'u',
  creationTimestamp: '2024-01-01T00:00:00Z',
  generation: 1,
  ...extra,
});
const cr = (spec: unknown, extra: Obj = {}): Obj => ({
  apiVersion: 'example.com/v1',
  kind: 'Widget',
  metadata: meta(),
  spec,
  ...extra,
});

describe('createdFieldsV1 writes what the update path writes', () => {
  it.each<[string, Obj]>([
    ['only stripped metadata', { apiVersion: 'example.com/v1', kind: 'Widget', metadata: meta() }],
    ['nothing at all', { apiVersion: 'example.com/v1', kind: 'Widget' }],
    [
      'labels, annotations, finalizers, owner references',
      {
        ...cr({ image: 'a' }),
        metadata: meta({
          labels: { b: '2', a: '1' },
          annotations: { z: '', 'example.com/x': 'y' },
          finalizers: ['b', 'a'],
          ownerReferences: [
            { apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'u2', controller: true },
            { apiVersion: 'v1', kind: 'Pod', name: 'q', uid: 'u1' },
          ],
          generateName: 'x-',
        }),
      },
    ],
    ['scalars in any order', cr({ replicas: 2, image: 'i', port: 'http', when: '2024-01-01T00:00:00Z' })],
    ['int-or-string as a number', cr({ port: 8080 })],
    ['granular and atomic maps', cr({ env: { Z: '1', A: '2', m: '' }, selector: { app: 'x' } })],
    ['empty containers', cr({ env: {}, args: [], tags: [], containers: [], config: {}, selector: {} })],
    ['nulls', cr({ env: null, tags: null, image: null, containers: null, nested: null })],
    ['atomic lists', cr({ args: ['b', 'a'], atomicList: ['x'] })],
    ['sets', cr({ tags: ['b', 'a', 'c'], nums: [10, 2, -1, 2.5] })],
    [
      'list-maps with defaulted key fields',
      cr({
        containers: [
          { name: 'web', image: 'nginx', ports: [{ port: 80 }, { port: 53, protocol: 'UDP' }, { port: 53 }] },
          { name: 'app', ports: [] },
          { name: 'sidecar' },
        ],
      }),
    ],
    ['list items without their key are skipped', cr({ containers: [{ image: 'x' }, { name: 'a' }] })],
    [
      'preserve-unknown-fields and embedded resources',
      cr({
        config: { b: { c: [1, 2], d: {} }, a: 'x', e: null },
        template: {
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'p', labels: { a: 'b' } },
          spec: { x: 1 },
        },
        anything: { deep: { list: [{ a: 1 }] } },
      }),
    ],
    ['an untyped field holding a list or a scalar', cr({ anything: [1, { a: 2 }] })],
    [
      'values of the wrong type',
      cr({ env: 'x', tags: 'y', containers: { name: 'a' }, image: { a: 1 }, nested: [1] }),
    ],
    [
      'undeclared fields',
      cr({ unknown: { a: 1 }, nested: { deep: { leaf: 'x', more: { a: [] }, other: 1 } } }, { extra: 1 }),
    ],
    ['status is reset by the status subresource', cr({ image: 'x' }, { status: { ready: true } })],
    ['a __proto__ key', cr({ env: JSON.parse('{"__proto__":"x","a":"b"}') })],
    ['unicode keys in code point order', cr({ env: { '\u{1F600}': 'a', '\uFFFF': 'b', é: 'c', e: 'd' } })],
    ['HTML-escaped and exotic set values', cr({ tags: ['<a>', 'b&c', '\u2028'], nums: [1e21, 0.1] })],
  ])('%s', (_name, obj) => {
    expect(same(obj, crAtom)).toBe(true);
    expect(same(obj, crAtom, STATUS)).toBe(true);
  });

  it('leaves lists with repeated items to the update path', () => {
    expect(direct(cr({ tags: ['a', 'a'] }), crAtom, undefined)).toBeUndefined();
    expect(
      direct(cr({ containers: [{ name: 'a' }, { name: 'a', image: 'x' }] }), crAtom, undefined),
    ).toBeUndefined();
  });

  it('shares one frozen tree between objects with the same fields', () => {
    const a = createdFieldsV1(cr({ image: 'a', env: { A: '1' } }), crAtom, STATUS, STRIP);
    const b = createdFieldsV1(cr({ env: { A: '2' }, image: 'b' }), crAtom, STATUS, STRIP);
    expect(a).toBe(b);
    expect(Object.isFrozen(a)).toBe(true);
    expect(Object.isFrozen((a as Obj)['f:spec'])).toBe(true);
    expect(Object.isFrozen(((a as Obj)['f:spec'] as Obj)['f:env'])).toBe(true);
    expect(createdFieldsV1(cr({ image: 'a' }), crAtom, STATUS, STRIP)).not.toBe(a);
  });

  it('leaves an atomic root to the update path', () => {
    const atomic = openApiAtom({ type: 'object', 'x-kubernetes-map-type': 'atomic' });
    expect(direct(cr({ a: 1 }), atomic, undefined)).toBeUndefined();
  });

  it('matches on built-in types with associative lists', () => {
    const deployment = builtinAtom('io.k8s.api.apps.v1.Deployment')!;
    const obj: Obj = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: meta({ labels: { app: 'web' } }),
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' } },
        strategy: {},
        template: {
          metadata: { labels: { app: 'web' }, creationTimestamp: null },
          spec: {
            containers: [
              {
                name: 'web',
                image: 'nginx',
                ports: [{ containerPort: 80 }, { containerPort: 53, protocol: 'UDP' }],
                env: [
                  { name: 'B', value: '1' },
                  { name: 'A', valueFrom: { fieldRef: { fieldPath: 'x' } } },
                ],
                resources: { limits: { cpu: '1' } },
                volumeMounts: [{ name: 'v', mountPath: '/v' }],
              },
              { name: 'init', image: 'busybox', command: ['sh', '-c'] },
            ],
            volumes: [{ name: 'v', emptyDir: {} }],
            tolerations: [{ key: 'k', operator: 'Exists' }],
          },
        },
      },
      status: { replicas: 1, conditions: [{ type: 'Available', status: 'True' }] },
    };
    expect(same(obj, deployment)).toBe(true);
    expect(same(obj, deployment, STATUS)).toBe(true);
    const service = builtinAtom('io.k8s.api.core.v1.Service')!;
    const svc: Obj = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta(),
      spec: {
        ports: [
          { port: 80, targetPort: 'http' },
          { port: 53, protocol: 'UDP' },
        ],
        selector: { a: 'b' },
      },
    };
    expect(same(svc, service)).toBe(true);
  });

  it('matches on built-in kinds whose empty value has a metadata of creationTimestamp: null', () => {
    // The protobuf zero value of ConfigMap, Secret, ServiceAccount, the RBAC kinds…: the update
    // chain compares a create against it.
    const zero = (apiVersion: string, kind: string): Obj => ({
      kind,
      apiVersion,
      metadata: { creationTimestamp: null },
    });
    const metas: (Obj | undefined | null)[] = [
      undefined,
      null,
      {},
      { creationTimestamp: null },
      { name: 'x', creationTimestamp: null, labels: { a: 'b' } },
      meta({ labels: { a: 'b', c: '' }, annotations: { 'x/y': 'z' } }),
      meta({ generateName: 'x-', finalizers: ['a/b', 'c'], resourceVersion: '5', selfLink: 's' }),
      meta({
        ownerReferences: [
          { apiVersion: 'v1', kind: 'Pod', name: 'p', uid: 'u1', controller: true },
          { apiVersion: 'v1', kind: 'Pod', name: 'q', uid: 'u2' },
        ],
        labels: {},
      }),
      { creationTimestamp: null, annotations: null, deletionGracePeriodSeconds: 3 },
    ];
    const configMap = builtinAtom('io.k8s.api.core.v1.ConfigMap')!;
    const secret = builtinAtom('io.k8s.api.core.v1.Secret')!;
    const account = builtinAtom('io.k8s.api.core.v1.ServiceAccount')!;
    const role = builtinAtom('io.k8s.api.rbac.v1.ClusterRole')!;
    const bodies: [Atom, Obj, Obj][] = [
      [configMap, zero('v1', 'ConfigMap'), {}],
      [configMap, zero('v1', 'ConfigMap'), { data: { a: '1', b: '' }, binaryData: { c: 'AA==' } }],
      [configMap, zero('v1', 'ConfigMap'), { data: {}, immutable: false }],
      [configMap, zero('v1', 'ConfigMap'), { data: null, immutable: true }],
      [secret, zero('v1', 'Secret'), { type: 'Opaque', data: { k: 'dg==' }, stringData: { s: 'v' } }],
      [
        account,
        zero('v1', 'ServiceAccount'),
        { secrets: [{ name: 'a' }], automountServiceAccountToken: false },
      ],
      [
        role,
        zero('rbac.authorization.k8s.io/v1', 'ClusterRole'),
        {
          rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }],
          aggregationRule: { clusterRoleSelectors: [{ matchLabels: { a: 'b' } }] },
        },
      ],
    ];
    for (const [atom, z, body] of bodies) {
      for (const m of metas) {
        const obj: Obj = { apiVersion: z.apiVersion, kind: z.kind, ...body };
        if (m !== undefined) obj.metadata = m;
        expect(same(obj, atom, undefined, z)).toBe(true);
      }
    }
  });

  it('matches on the seed CRDs and random objects of every schema', () => {
    const schemas: Obj[] = [crSchema, kitchenSink.spec.versions[0]!.schema.openAPIV3Schema];
    for (const f of ['foo-crd.yaml', 'etcdcluster-crd.yaml', 'genericdaemon-crd.yaml', 'foobar-crd.yaml']) {
      const crd = parse(
        readFileSync(new URL(`../../../kubeloop/src/schema/testdata/${f}`, import.meta.url), 'utf8'),
      ) as typeof kitchenSink;
      schemas.push(crd.spec.versions[0]!.schema.openAPIV3Schema);
    }
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    let handled = 0;
    for (const schema of schemas) {
      const atom = customResourceAtom(schema as never);
      for (let i = 0; i < 150; i++) {
        const obj = {
          ...(randomValue(schema, rand, 0) as Obj),
          apiVersion: 'x/v1',
          kind: 'X',
          metadata: meta(),
        };
        if (same(obj, atom)) handled++;
        same(obj, atom, STATUS);
      }
    }
    // Random lists repeat an item now and then; most objects go through the walk.
    expect(handled).toBeGreaterThan(schemas.length * 100);
  });
});

/** A random value for a schema: mostly of its type, sometimes null, empty or of another type. */
function randomValue(s: Obj, rand: (n: number) => number, depth: number): unknown {
  const r = rand(20);
  if (r === 0) return null;
  if (r === 1) return ['x', 1, true, {}, []][rand(5)];
  const props = (s.properties ?? {}) as Record<string, Obj>;
  const type =
    s.type ??
    (Object.keys(props).length > 0 ? 'object' : s['x-kubernetes-int-or-string'] ? 'int-or-string' : '');
  switch (type) {
    case 'object': {
      const out: Obj = {};
      const names = Object.keys(props);
      for (const n of names) if (rand(3) > 0) out[n] = randomValue(props[n]!, rand, depth + 1);
      const ap = s.additionalProperties;
      if ((ap || s['x-kubernetes-preserve-unknown-fields']) && depth < 6) {
        for (let k = rand(4); k > 0; k--) {
          out[`k${rand(6)}`] = randomValue(ap && typeof ap === 'object' ? (ap as Obj) : {}, rand, depth + 1);
        }
      }
      return out;
    }
    case 'array': {
      const items = (s.items ?? {}) as Obj;
      const out: unknown[] = [];
      for (let k = rand(5); k > 0; k--) out.push(randomValue(items, rand, depth + 1));
      return out;
    }
    case 'integer':
      return rand(50) - 10;
    case 'number':
      return rand(100) / 8;
    case 'boolean':
      return rand(2) === 0;
    case 'string':
      return ['a', 'b', 'TCP', 'UDP', 'c<d', ''][rand(6)];
    case 'int-or-string':
      return rand(2) === 0 ? rand(10) : `p${rand(3)}`;
    default:
      if (depth > 5) return rand(3);
      return [rand(3), `s${rand(3)}`, { a: rand(2), b: [rand(2)] }, [rand(2), 'x']][rand(4)];
  }
}

describe('updateManagedFields on a custom resource create', () => {
  it('records the walk with the entry of the update path', async () => {
    const { customResourceTypes } = await import('../apiextensions/custom-resource-type.js');
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            subresources: { status: {} },
            schema: { openAPIV3Schema: crSchema },
          },
        ],
      },
    };
    const [t] = customResourceTypes(crd as never, crd.spec.names);
    const obj = cr({ image: 'a', tags: ['x'], env: { A: '1' } }, { status: { ready: true } });
    obj.metadata = meta({ labels: { a: 'b' } });
    updateManagedFields(t!, undefined, obj, { manager: '', now: '2024-05-01T10:00:00Z' });
    expect(JSON.stringify((obj.metadata as Obj).managedFields)).toBe(
      JSON.stringify([
        {
          manager: 'unknown',
          operation: 'Update',
          apiVersion: 'example.com/v1',
          time: '2024-05-01T10:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } },
            'f:spec': {
              '.': {},
              'f:env': { '.': {}, 'f:A': {} },
              'f:image': {},
              'f:tags': { '.': {}, 'v:"x"': {} },
            },
          },
        },
      ]),
    );
    const bare: Obj = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: meta({ managedFields: [] }) };
    updateManagedFields(t!, undefined, bare, { manager: 'm' });
    expect((bare.metadata as Obj).managedFields).toBeUndefined();
  });
});

describe('updateManagedFields on a built-in create', () => {
  it('records a ConfigMap create with the walk: the update path entry, the shared tree', async () => {
    const { Registry } = await import('../registry/registry.js');
    const t = new Registry().lookup('', 'v1', 'configmaps')!;
    const create = (value: string): Obj => {
      const obj: Obj = {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: `cm-${value}`, namespace: 'default', labels: { app: value } },
        data: { key: value },
      };
      updateManagedFields(t, undefined, obj, { manager: 'kubectl-create', now: '2024-05-01T10:00:00Z' });
      return obj;
    };
    const a = create('a');
    expect(JSON.stringify((a.metadata as Obj).managedFields)).toBe(
      JSON.stringify([
        {
          manager: 'kubectl-create',
          operation: 'Update',
          apiVersion: 'v1',
          time: '2024-05-01T10:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:data': { '.': {}, 'f:key': {} },
            'f:metadata': { 'f:labels': { '.': {}, 'f:app': {} } },
          },
        },
      ]),
    );
    // Only the walk shares one frozen tree between creates with the same fields.
    const b = create('b');
    const fieldsV1 = (o: Obj) => ((o.metadata as Obj).managedFields as Obj[])[0]!.fieldsV1;
    expect(fieldsV1(b)).toBe(fieldsV1(a));
  });
});
