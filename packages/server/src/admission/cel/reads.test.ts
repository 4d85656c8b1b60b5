import { toCelValue } from 'kubeloop/schema';
import { describe, expect, it } from 'vitest';
import { type AdmissionAttributes, AdmissionCelEnv, activationFor } from './index.js';
import { celValue, prunedCelValue } from './reads.js';

const object = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: {
    name: 'cm-1',
    namespace: 'ns',
    labels: { app: 'a' },
    generation: 3,
    managedFields: [{ manager: 'm', fieldsV1: { 'f:data': {} } }],
  },
  data: { payload: 'x', other: 'y' },
  spec: { replicas: 2, ratio: 0.5, list: [1, 'a', { n: 4 }], items: [{ name: 'i', port: 80 }] },
};

const attrs = (): AdmissionAttributes => ({
  operation: 'UPDATE',
  resource: { group: '', version: 'v1', resource: 'configmaps' },
  subresource: '',
  kind: { group: '', version: 'v1', kind: 'ConfigMap' },
  name: 'cm-1',
  namespace: 'ns',
  object,
  oldObject: { ...object, data: { payload: 'old' } },
  userInfo: { username: 'alice' },
  dryRun: false,
});

/** What an expression gives (or the error it throws), run with `values`. */
function outcome(run: () => unknown): unknown {
  try {
    return { ok: run() };
  } catch (e) {
    return { error: (e as Error).message };
  }
}

describe('the values expressions read', () => {
  // Each expression, compiled alone, gets the same answer or error from the parts of the objects
  // it reads as from the objects whole.
  const expressions = [
    "object.metadata.name.startsWith('cm-')",
    'has(object.data) ? object.data : {}',
    'has(object.metadata.annotations)',
    'has(object.status.phase)',
    'object.metadata.missing',
    'object.spec.replicas + 1',
    'object.spec.ratio',
    'object.spec.list',
    'object.spec.items.all(o, o.port > 10)',
    'object.spec.items.map(object, object.name)',
    'object.?spec.?replicas.orValue(0)',
    'object.?status.?phase.orValue("none")',
    "object['metadata'].name",
    'size(object.metadata)',
    'object.metadata.labels == {"app": "a"}',
    'object.data.payload + oldObject.data.payload',
    'oldObject.data.other',
    'object == oldObject',
    'object.metadata.generation == 3',
    '[object.metadata.name, object.kind]',
    "{'k': object.spec}.k.replicas",
    'object.metadata.name.size() > params.max',
    'string(object.spec.replicas) + params.prefix',
  ];
  for (const e of expressions) {
    it(e, () => {
      const env = new AdmissionCelEnv({ params: true });
      const compiled = env.compile(e);
      expect(compiled.error).toBeUndefined();
      const params = { max: 2, prefix: 'p', big: { unread: [1, 2, 3] } };
      const a = activationFor(attrs(), { params });
      // The whole values, as the environment-less context gives them.
      const whole = outcome(() => compiled.evaluate({ context: () => a.context(undefined) }));
      expect(outcome(() => compiled.evaluate(activationFor(attrs(), { params })))).toEqual(whole);
    });
  }

  it('converts only the parts read, and again when a later expression reads more', () => {
    const env = new AdmissionCelEnv({
      variables: [{ name: 'data', expression: 'has(object.data) ? object.data : {}' }],
    });
    const first = env.compile("object.metadata.name.startsWith('cm-') && size(variables.data) > 0");
    const a = activationFor(attrs());
    const seen: unknown[] = [];
    const spy = {
      context: (e: AdmissionCelEnv) => {
        const ctx = a.context(e) as { object: unknown };
        seen.push(ctx.object);
        return ctx;
      },
    };
    expect(first.evaluate(spy)).toBe(true);
    expect(seen[0]).toEqual({ metadata: { name: 'cm-1' }, data: { payload: 'x', other: 'y' } });
    const later = env.compile('object.spec.replicas == 2');
    expect(later.evaluate(spy)).toBe(true);
    expect(seen.at(-1)).toEqual({
      metadata: { name: 'cm-1' },
      data: { payload: 'x', other: 'y' },
      spec: { replicas: 2n },
    });
  });

  it('keeps JSON without numbers as it is, and converts integers to int', () => {
    expect(celValue(object.data)).toBe(object.data);
    expect(celValue(object.metadata.labels)).toBe(object.metadata.labels);
    for (const v of [object, object.spec, object.metadata, [1, 'a'], 2, 0.5, null, 'x', [[{ a: 1 }]]])
      expect(celValue(v)).toEqual(toCelValue(v, undefined));
    const converted = celValue(object) as typeof object;
    expect(converted.data).toBe(object.data);
    expect(converted.spec.items[0]!.port).toBe(80n);
    expect(
      prunedCelValue(object, { keys: ['spec'], trees: [{ keys: ['replicas'], trees: [true] }] }),
    ).toEqual({
      spec: { replicas: 2n },
    });
  });
});
