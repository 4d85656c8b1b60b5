import { readFileSync } from 'node:fs';
import { describe, expect, test } from 'vitest';
import { parse } from 'yaml';
import { causeText } from '../api/validation.js';
import { compileSchema, validateCustomResource } from './compile.js';
import { columnCell } from './jsonpath.js';
import type { CustomResourceDefinition } from './types.js';

const load = (f: string): CustomResourceDefinition =>
  parse(readFileSync(new URL(`./testdata/${f}`, import.meta.url), 'utf8'));
const schemaOf = (crd: CustomResourceDefinition) => {
  const s = crd.spec.versions[0]?.schema?.openAPIV3Schema;
  if (!s) throw new Error('no schema');
  return s;
};
const meta = { name: 'x', namespace: 'default' };

describe('seed CRDs', () => {
  test('FooBar requires spec.target', () => {
    const c = compileSchema(schemaOf(load('foobar-crd.yaml')));
    expect(
      c.validate({ apiVersion: 'example.com/v1', kind: 'FooBar', metadata: meta, spec: {} }).map(causeText),
    ).toEqual(['spec.target: Required value']);
  });

  test('Foo replicas bounds, through the full custom resource validation', () => {
    const crd = load('foo-crd.yaml');
    const c = compileSchema(schemaOf(crd));
    const kind = { group: 'samplecontroller.k8s.io', version: 'v1alpha1', kind: 'Foo', namespaced: true };
    const obj = {
      apiVersion: 'samplecontroller.k8s.io/v1alpha1',
      kind: 'Foo',
      metadata: { name: 'example-foo', namespace: 'default' },
      spec: { deploymentName: 'd', replicas: 11 },
    };
    expect(validateCustomResource(c, obj, kind).map(causeText)).toEqual([
      'spec.replicas: Invalid value: 11: spec.replicas in body should be less than or equal to 10',
    ]);
    expect(validateCustomResource(c, { ...obj, kind: 'Bar' }, kind).map(causeText)).toEqual([
      'kind: Invalid value: "Bar": must be Foo',
    ]);
    expect(
      validateCustomResource(
        c,
        { ...obj, metadata: { name: 'Bad_Name', namespace: 'default' }, spec: {} },
        kind,
      )[0]?.field,
    ).toBe('metadata.name');
  });

  test('GenericDaemon requires spec.image', () => {
    const c = compileSchema(schemaOf(load('genericdaemon-crd.yaml')));
    expect(c.validate({ spec: { label: 'a' } }).map(causeText)).toEqual(['spec.image: Required value']);
  });

  test('EtcdCluster: defaults, CEL, transition rule, scale and columns', () => {
    const crd = load('etcdcluster-crd.yaml');
    const c = compileSchema(schemaOf(crd));
    const kind = {
      group: 'etcd.database.coreos.com',
      version: 'v1beta2',
      kind: 'EtcdCluster',
      namespaced: true,
      scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.size' },
    };
    const obj: Record<string, unknown> = {
      apiVersion: 'etcd.database.coreos.com/v1beta2',
      kind: 'EtcdCluster',
      metadata: meta,
      spec: { size: 4 },
    };
    c.applyDefaults(obj);
    expect(obj.spec).toEqual({ size: 4, version: '3.5.0' });
    expect(validateCustomResource(c, obj, kind).map(causeText)).toEqual([
      'spec.size: Invalid value: "integer": size must be odd',
    ]);
    const next = { ...obj, spec: { size: 3, version: '3.4.0' } };
    expect(
      validateCustomResource(c, next, kind, {
        ...obj,
        metadata: { ...meta, resourceVersion: '1' },
        spec: { size: 3, version: '3.5.0' },
      }).map(causeText),
    ).toContain('spec.version: Invalid value: "string": version may not be downgraded');
    const columns = crd.spec.versions[0]?.additionalPrinterColumns ?? [];
    expect(columns.map((col) => columnCell(next, col))).toEqual([3, '3.4.0']);
  });

  test('kitchen sink: a valid object passes, an invalid one reports every keyword', () => {
    const c = compileSchema(schemaOf(load('kitchensink-crd.yaml')));
    const good: Record<string, unknown> = {
      apiVersion: 'kitchen.example.com/v1',
      kind: 'Sink',
      metadata: meta,
      spec: {
        name: 'abc',
        replicas: 4,
        ratio: 0.5,
        port: '50%',
        created: '2024-01-01T00:00:00Z',
        tags: ['a'],
        ports: [{ name: 'http' }],
        labels: { a: 'b' },
        template: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } },
        extra: { anything: [1, 2] },
      },
    };
    expect(c.prune(good)).toEqual([]);
    c.applyDefaults(good);
    expect(c.validate(good)).toEqual([]);
    const bad = {
      ...good,
      spec: { ...(good.spec as object), template: { kind: 'Pod', metadata: { name: 'a/b' } } },
    };
    expect(c.validate(bad).map(causeText)).toEqual([
      'spec.template.apiVersion: Required value: must not be empty',
      'spec.template.metadata.name: Invalid value: "a/b": may not contain \'/\'',
      // A Required error blocks CEL, as in the apiserver.
      '<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
    ]);
  });
});
