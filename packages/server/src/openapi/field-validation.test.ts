import { describe, expect, it } from 'vitest';
import {
  cannotBeHandledMessage,
  findDuplicateFields,
  findUnknownFields,
  goQuote,
  pruneUnknownFields,
  strictDecodingMessage,
} from './field-validation.js';
import { SchemaCompiler, type SchemaView } from './schema-view.js';

const compiler = new SchemaCompiler();

function builtin(name: string): SchemaView {
  const view = compiler.definition(name);
  if (!view) throw new Error(`no definition ${name}`);
  return view;
}

function deployment(spec: Record<string, unknown>) {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'web', namespace: 'default', labels: { app: 'web', 'example.com/tier': 'front' } },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: 'web' } },
      template: {
        metadata: { labels: { app: 'web' }, annotations: { 'a/b': 'c' } },
        spec: {
          containers: [
            {
              name: 'web',
              image: 'nginx:1.27',
              ports: [{ containerPort: 80, name: 'http', protocol: 'TCP' }],
              env: [{ name: 'A', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
              resources: { limits: { cpu: '500m', memory: '128Mi' }, requests: { cpu: 0.1 } },
              livenessProbe: { httpGet: { path: '/', port: 'http' }, periodSeconds: 5 },
              readinessProbe: { tcpSocket: { port: 80 } },
            },
          ],
        },
      },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: 1 } },
      ...spec,
    },
  };
}

describe('findUnknownFields on built-in kinds', () => {
  const deploymentView = builtin('io.k8s.api.apps.v1.Deployment');

  it('accepts a complete, valid Deployment (maps, IntOrString, Quantity)', () => {
    expect(findUnknownFields(deployment({}), deploymentView)).toEqual([]);
  });

  it('reports the spec.replica typo with its full path, as kube-apiserver does', () => {
    const { replicas, ...spec } = deployment({}).spec;
    expect(replicas).toBe(2);
    const obj = { ...deployment({}), spec: { ...spec, replica: 3 } };
    expect(findUnknownFields(obj, deploymentView)).toEqual(['unknown field "spec.replica"']);
  });

  it('reports unknown fields inside list items with their index, in document order', () => {
    const obj = deployment({});
    const containers = obj.spec.template.spec.containers as Record<string, unknown>[];
    containers.push({ name: 'sidecar', image: 'busybox', imagePullPolice: 'Always', ports: [{ port: 1 }] });
    const withStatus = { ...obj, status: { replicas: 1, bogus: true } };
    expect(findUnknownFields(withStatus, deploymentView)).toEqual([
      'unknown field "spec.template.spec.containers[1].imagePullPolice"',
      'unknown field "spec.template.spec.containers[1].ports[0].port"',
      'unknown field "status.bogus"',
    ]);
  });

  it('is case-sensitive, like kube-apiserver decoding', () => {
    const obj = { ...deployment({}), Spec: {} };
    expect(findUnknownFields(obj, deploymentView)).toEqual(['unknown field "Spec"']);
  });

  it('reports an unknown field of a Pod container', () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'p',
        labels: { a: 'b' },
        ownerReferences: [{ apiVersion: 'v1', kind: 'X', name: 'x', uid: 'u' }],
      },
      spec: {
        containers: [
          { name: 'c', image: 'i', command: ['sh'], securityContext: { runAsUser: 1 }, volumeMount: [] },
        ],
        nodeSelector: { 'kubernetes.io/os': 'linux' },
        volumes: [{ name: 'v', configMap: { name: 'cm', items: [{ key: 'k', path: 'p' }] } }],
      },
    };
    expect(findUnknownFields(pod, builtin('io.k8s.api.core.v1.Pod'))).toEqual([
      'unknown field "spec.containers[0].volumeMount"',
    ]);
  });

  it('accepts any key in a ConfigMap data map but not beside it', () => {
    const view = builtin('io.k8s.api.core.v1.ConfigMap');
    const cm = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cfg', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}' } },
      data: { 'app.properties': 'a=b', 'weird key!': 'x', spec: 'not a field' },
      binaryData: { 'logo.png': 'iVBORw0KGgo=' },
      immutable: false,
    };
    expect(findUnknownFields(cm, view)).toEqual([]);
    expect(findUnknownFields({ ...cm, spec: { a: 1 }, status: {} }, view)).toEqual([
      'unknown field "spec"',
      'unknown field "status"',
    ]);
  });

  it('checks metadata against ObjectMeta, with labels as a map and managedFields free-form', () => {
    const view = builtin('io.k8s.api.core.v1.ConfigMap');
    const cm = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'cfg',
        labels: { anything: 'goes', 'a.b/c': '' },
        managedFields: [
          {
            manager: 'kubectl',
            operation: 'Apply',
            fieldsType: 'FieldsV1',
            fieldsV1: { 'f:data': { 'f:a': {} } },
          },
        ],
        finalizer: ['x'],
      },
    };
    expect(findUnknownFields(cm, view)).toEqual(['unknown field "metadata.finalizer"']);
  });

  it('accepts IntOrString as a number or a string and does not look inside it', () => {
    const view = builtin('io.k8s.api.core.v1.Service');
    const svc = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 's' },
      spec: {
        selector: { app: 'web' },
        ports: [
          { name: 'http', port: 80, targetPort: 8080 },
          { name: 'https', port: 443, targetPort: 'https', nodePort: 30443, protocol: 'TCP' },
        ],
      },
    };
    expect(findUnknownFields(svc, view)).toEqual([]);
    const bad = { ...svc, spec: { ...svc.spec, ports: [{ port: 80, targetPort: 8080, target: 1 }] } };
    expect(findUnknownFields(bad, view)).toEqual(['unknown field "spec.ports[0].target"']);
  });

  it('looks through a CRD object into JSONSchemaProps but not into raw JSON values', () => {
    const view = builtin('io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition');
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'foos.example.com' },
      spec: {
        group: 'example.com',
        names: { kind: 'Foo', plural: 'foos' },
        scope: 'Namespaced',
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: {
                  spec: {
                    type: 'object',
                    'x-kubernetes-preserve-unknown-fields': true,
                    default: { anything: { nested: true } },
                    properties: { size: { type: 'integer', minimum: 1, maxium: 3 } },
                  },
                },
              },
            },
          },
        ],
      },
    };
    expect(findUnknownFields(crd, view)).toEqual([
      'unknown field "spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.size.maxium"',
    ]);
  });

  it('stops at 100 errors, as sigs.k8s.io/json does, and reports each path once', () => {
    const view = builtin('io.k8s.api.core.v1.ConfigMap');
    const extra = Object.fromEntries(Array.from({ length: 150 }, (_, i) => [`x${i}`, i]));
    const errors = findUnknownFields({ metadata: { name: 'a' }, ...extra }, view);
    expect(errors).toHaveLength(100);
    expect(errors[0]).toBe('unknown field "x0"');
    expect(errors[99]).toBe('unknown field "x99"');
  });

  it('ignores values whose type does not match (a type error, not a strict one)', () => {
    expect(findUnknownFields(deployment({ replicas: { nested: 1 } }), deploymentView)).toEqual([]);
  });
});

describe('findUnknownFields on custom resources (pruning semantics)', () => {
  const schema = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          replicas: { type: 'integer' },
          port: { 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] },
          selector: { type: 'object', additionalProperties: { type: 'string' } },
          items: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
          config: {
            type: 'object',
            'x-kubernetes-preserve-unknown-fields': true,
            properties: { mode: { type: 'object', properties: { a: { type: 'string' } } } },
          },
          template: {
            type: 'object',
            'x-kubernetes-embedded-resource': true,
            properties: { spec: { type: 'object', properties: { image: { type: 'string' } } } },
          },
          raw: { type: 'object' },
        },
      },
      status: { type: 'object', properties: { ready: { type: 'boolean' } } },
    },
  };
  const view = compiler.customResource(schema);
  const foo = (spec: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
    apiVersion: 'example.com/v1',
    kind: 'Foo',
    metadata: { name: 'f', namespace: 'default', labels: { a: 'b' } },
    spec,
    ...extra,
  });

  it('accepts known fields, maps, int-or-string and preserved subtrees', () => {
    const obj = foo({
      replicas: 1,
      port: 'http',
      selector: { any: 'key' },
      items: [{ name: 'a' }],
      config: { whatever: { deep: [1, { x: 1 }] }, mode: { a: 'x' } },
      template: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p', labels: { x: 'y' } },
        spec: { image: 'i' },
      },
    });
    expect(findUnknownFields(obj, view)).toEqual([]);
  });

  it('reports every field the structural schema does not specify, sorted', () => {
    const obj = foo(
      {
        zeta: 1,
        replicas: 1,
        items: [{ name: 'a', extra: true }],
        config: { mode: { a: 'x', b: 'y' } },
        template: { spec: { image: 'i', command: ['x'] } },
        raw: { anything: 1 },
      },
      { status: { ready: true, phase: 'x' }, top: 1 },
    );
    expect(findUnknownFields(obj, view)).toEqual([
      'unknown field "spec.config.mode.b"',
      'unknown field "spec.items[0].extra"',
      'unknown field "spec.raw.anything"',
      'unknown field "spec.template.spec.command"',
      'unknown field "spec.zeta"',
      'unknown field "status.phase"',
      'unknown field "top"',
    ]);
  });

  it('checks root and embedded metadata as ObjectMeta, reported after the pruned fields', () => {
    const obj = {
      ...foo({ template: { metadata: { name: 'p', labelz: {} } }, zz: 1 }),
      metadata: { name: 'f', bogus: 1 },
    };
    expect(findUnknownFields(obj, view)).toEqual([
      'unknown field "spec.zz"',
      'unknown field "metadata.bogus"',
      'unknown field "spec.template.metadata.labelz"',
    ]);
  });

  it('keeps everything under a root that preserves unknown fields', () => {
    const open = compiler.customResource({ type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
    expect(
      findUnknownFields(
        { apiVersion: 'a/v1', kind: 'A', metadata: { name: 'a' }, spec: { x: { y: 1 } } },
        open,
      ),
    ).toEqual([]);
  });
});

describe('pruneUnknownFields', () => {
  it('drops unknown fields in place, as decoding or pruning does, and reports them', () => {
    const obj = deployment({ replica: 3 });
    const containers = obj.spec.template.spec.containers as Record<string, unknown>[];
    containers[0] = { ...containers[0], foo: { bar: 1 } };
    // Document order: `replica` comes after `template` in this object.
    expect(pruneUnknownFields(obj, builtin('io.k8s.api.apps.v1.Deployment'))).toEqual([
      'unknown field "spec.template.spec.containers[0].foo"',
      'unknown field "spec.replica"',
    ]);
    expect(obj.spec).not.toHaveProperty('replica');
    expect(containers[0]).not.toHaveProperty('foo');
    expect(obj.spec.replicas).toBe(2);
    expect(containers[0]?.image).toBe('nginx:1.27');
    expect(findUnknownFields(obj, builtin('io.k8s.api.apps.v1.Deployment'))).toEqual([]);
  });

  it('prunes a custom resource but keeps preserved subtrees', () => {
    const view = compiler.customResource({
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          properties: {
            a: { type: 'string' },
            free: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
          },
        },
      },
    });
    const obj = {
      apiVersion: 'x/v1',
      kind: 'X',
      metadata: { name: 'x' },
      spec: { a: 'a', b: 'b', free: { c: 1 } },
    };
    expect(pruneUnknownFields(obj, view)).toEqual(['unknown field "spec.b"']);
    expect(obj).toEqual({
      apiVersion: 'x/v1',
      kind: 'X',
      metadata: { name: 'x' },
      spec: { a: 'a', free: { c: 1 } },
    });
  });
});

describe('findDuplicateFields', () => {
  it('finds nothing in ordinary JSON', () => {
    expect(findDuplicateFields(JSON.stringify(deployment({})))).toEqual([]);
  });

  it('reports a repeated key with its path', () => {
    const raw =
      '{"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":1,"selector":{},"replicas":2}}';
    expect(findDuplicateFields(raw)).toEqual(['duplicate field "spec.replicas"']);
  });

  it('reports duplicates at the root, in maps and in list items, in document order', () => {
    const raw = `{
      "kind": "Pod", "kind": "Pod",
      "metadata": { "labels": { "app": "a", "tier": "b", "app": "c" } },
      "spec": { "containers": [ { "name": "a" }, { "name": "b", "image": "x", "name": "c" } ] }
    }`;
    expect(findDuplicateFields(raw)).toEqual([
      'duplicate field "kind"',
      'duplicate field "metadata.labels.app"',
      'duplicate field "spec.containers[1].name"',
    ]);
  });

  it('is not fooled by keys and braces inside string values, nor by nested arrays', () => {
    const raw = JSON.stringify({
      data: {
        a: '{"a":1,"a":2}',
        b: 'x\\"y", "b": 1',
        c: [
          [1, 2],
          [{ k: 1 }, { k: 2 }],
        ],
        d: null,
      },
      e: [true, false, null, -1.5e3, 'a'],
    });
    expect(findDuplicateFields(raw)).toEqual([]);
  });

  it('compares keys after unescaping and reports each duplicate once', () => {
    const raw = '{"spec":{"a":1,"\\u0061":2,"a":3},"list":[{"x":1,"x":2},{"x":1,"x":2}]}';
    expect(findDuplicateFields(raw)).toEqual([
      'duplicate field "spec.a"',
      'duplicate field "list[0].x"',
      'duplicate field "list[1].x"',
    ]);
  });

  it('finds duplicates among many keys of one object, and none across sibling objects', () => {
    const keys = Array.from({ length: 40 }, (_, i) => `"k${i}":${i}`);
    const raw = `{"a":{${keys.join(',')},"k3":0,"k39":1,"k3":2},"b":{${keys.join(',')}},"c":[{"k0":1},{"k0":1}]}`;
    expect(findDuplicateFields(raw)).toEqual(['duplicate field "a.k3"', 'duplicate field "a.k39"']);
    const nested = '[[{"a":[{"b":1,"b":2}]}],{"c":{"d":{"e":1,"e":1}}},{"c":{"d":{"e":1}}}]';
    expect(findDuplicateFields(nested)).toEqual([
      'duplicate field "[0][0].a[0].b"',
      'duplicate field "[1].c.d.e"',
    ]);
  });

  it('handles a key whose value is an array of objects after whitespace', () => {
    const raw = '{ "items" : [ { "a" : 1 } , { "a" : 1 , "a" : 2 } ] , "items" : [] }';
    expect(findDuplicateFields(raw)).toEqual(['duplicate field "items[1].a"', 'duplicate field "items"']);
  });
});

describe('messages', () => {
  it('quotes paths like Go %q', () => {
    expect(goQuote('spec.replicas')).toBe('"spec.replicas"');
    expect(goQuote('a"b\\c')).toBe('"a\\"b\\\\c"');
    expect(goQuote('tab\there\n')).toBe('"tab\\there\\n"');
    expect(goQuote('\u0001\u007f')).toBe('"\\x01\\x7f"');
    expect(goQuote('héllo ☃')).toBe('"héllo ☃"');
  });

  it('formats the 400 messages of kube-apiserver', () => {
    const errors = ['unknown field "spec.replica"', 'duplicate field "spec.replicas"'];
    expect(strictDecodingMessage(errors)).toBe(
      'strict decoding error: unknown field "spec.replica", duplicate field "spec.replicas"',
    );
    expect(cannotBeHandledMessage('Deployment', 'v1', errors.slice(0, 1))).toBe(
      'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: unknown field "spec.replica"',
    );
  });
});
