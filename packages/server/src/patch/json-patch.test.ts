import { ApiError, type Status } from 'kubeloop/api';
import { describe, expect, it } from 'vitest';
import { applyJsonPatch, MAX_JSON_PATCH_OPERATIONS } from './json-patch.js';

const statusOf = (fn: () => unknown): Status => {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err.status;
    throw err;
  }
  throw new Error('expected an ApiError');
};

/** What kube-apiserver answers for any JSON patch operation that cannot be applied. */
const UNPROCESSABLE: Status = {
  kind: 'Status',
  apiVersion: 'v1',
  metadata: {},
  status: 'Failure',
  message: 'the server rejected our request due to an error in our request',
  reason: 'Invalid',
  details: {},
  code: 422,
};

function deployment() {
  return {
    metadata: { name: 'web', annotations: { 'example.com/owner': 'team-a' }, labels: { app: 'web' } },
    spec: {
      replicas: 1,
      template: {
        spec: {
          containers: [
            { name: 'app', image: 'nginx:1.25' },
            { name: 'sidecar', image: 'busybox' },
          ],
        },
      },
    },
  };
}

describe('applyJsonPatch', () => {
  it('applies add, replace, remove, copy, move and test in order', () => {
    const result = applyJsonPatch(deployment(), [
      { op: 'test', path: '/spec/replicas', value: 1 },
      { op: 'replace', path: '/spec/replicas', value: 3 },
      { op: 'add', path: '/metadata/labels/tier', value: 'frontend' },
      { op: 'remove', path: '/metadata/labels/app' },
      { op: 'copy', from: '/metadata/labels/tier', path: '/metadata/labels/copied' },
      { op: 'move', from: '/spec/template/spec/containers/1', path: '/spec/template/spec/containers/0' },
      { op: 'add', path: '/spec/template/spec/containers/-', value: { name: 'last', image: 'x' } },
    ]);
    expect(result).toStrictEqual({
      metadata: {
        name: 'web',
        annotations: { 'example.com/owner': 'team-a' },
        labels: { tier: 'frontend', copied: 'frontend' },
      },
      spec: {
        replicas: 3,
        template: {
          spec: {
            containers: [
              { name: 'sidecar', image: 'busybox' },
              { name: 'app', image: 'nginx:1.25' },
              { name: 'last', image: 'x' },
            ],
          },
        },
      },
    });
  });

  it('unescapes ~1 and ~0 in pointers (annotation keys with slashes)', () => {
    const result = applyJsonPatch(deployment(), [
      { op: 'replace', path: '/metadata/annotations/example.com~1owner', value: 'team-b' },
      { op: 'add', path: '/metadata/annotations/a~0b', value: 'tilde' },
    ]) as ReturnType<typeof deployment>;
    expect(result.metadata.annotations).toStrictEqual({ 'example.com/owner': 'team-b', 'a~b': 'tilde' });
  });

  it('answers 422 without detail when a test fails', () => {
    const patch = [{ op: 'test', path: '/spec/replicas', value: 2 }];
    expect(statusOf(() => applyJsonPatch(deployment(), patch))).toStrictEqual(UNPROCESSABLE);
  });

  it.each([
    ['remove of a missing key', { op: 'remove', path: '/metadata/labels/missing' }],
    ['add under a missing parent', { op: 'add', path: '/spec/missing/child', value: 1 }],
    ['add at the root', { op: 'add', path: '', value: {} }],
    ['index past the end', { op: 'add', path: '/spec/template/spec/containers/3', value: {} }],
    ['replace past the end', { op: 'replace', path: '/spec/template/spec/containers/2', value: {} }],
    ['non-numeric index', { op: 'remove', path: '/spec/template/spec/containers/first' }],
    ['unknown operation', { op: 'merge', path: '/spec', value: {} }],
    ['missing op', { path: '/spec', value: {} }],
    ['missing path', { op: 'add', value: 1 }],
    ['move from a missing key', { op: 'move', from: '/spec/nope', path: '/spec/yes' }],
    ['replace of the root with a scalar', { op: 'replace', path: '', value: 3 }],
    ['a null operation', null],
    ['walking through a scalar', { op: 'add', path: '/spec/replicas/x', value: 1 }],
  ])('answers 422 for %s', (_, operation) => {
    expect(statusOf(() => applyJsonPatch(deployment(), [operation]))).toStrictEqual(UNPROCESSABLE);
  });

  it('leaves the original untouched when a later operation fails', () => {
    const original = deployment();
    const before = structuredClone(original);
    const patch = [
      { op: 'replace', path: '/spec/replicas', value: 5 },
      { op: 'test', path: '/spec/replicas', value: 1 },
    ];
    expect(() => applyJsonPatch(original, patch)).toThrow(ApiError);
    expect(original).toStrictEqual(before);
  });

  it('never modifies its inputs, nor shares values with the patch', () => {
    const original = deployment();
    const patch = [{ op: 'add', path: '/metadata/labels/x', value: { nested: true } }];
    const before = structuredClone([original, patch]);
    const result = applyJsonPatch(original, patch) as {
      metadata: { labels: Record<string, { nested: boolean }> };
    };
    expect([original, patch]).toStrictEqual(before);
    expect(result.metadata.labels.x).not.toBe(patch[0]?.value);
  });

  describe('behaviours of evanphx/json-patch v4 that differ from RFC 6902', () => {
    it('replaces a key the object lacks by adding it', () => {
      const result = applyJsonPatch({ a: 1 }, [{ op: 'replace', path: '/b', value: 2 }]);
      expect(result).toStrictEqual({ a: 1, b: 2 });
    });

    it('writes null for add and replace without value', () => {
      expect(applyJsonPatch({ a: 1 }, [{ op: 'add', path: '/b' }])).toStrictEqual({ a: 1, b: null });
      expect(applyJsonPatch({ a: 1 }, [{ op: 'replace', path: '/a' }])).toStrictEqual({ a: null });
    });

    it('counts negative indices from the end', () => {
      const list = { l: ['a', 'b', 'c'] };
      expect(applyJsonPatch(list, [{ op: 'remove', path: '/l/-1' }])).toStrictEqual({ l: ['a', 'b'] });
      expect(applyJsonPatch(list, [{ op: 'replace', path: '/l/-3', value: 'z' }])).toStrictEqual({
        l: ['z', 'b', 'c'],
      });
      expect(applyJsonPatch(list, [{ op: 'add', path: '/l/-1', value: 'd' }])).toStrictEqual({
        l: ['a', 'b', 'c', 'd'],
      });
      expect(statusOf(() => applyJsonPatch(list, [{ op: 'remove', path: '/l/-4' }]))).toStrictEqual(
        UNPROCESSABLE,
      );
    });

    it('parses indices like strconv.Atoi', () => {
      expect(applyJsonPatch({ l: ['a', 'b'] }, [{ op: 'remove', path: '/l/01' }])).toStrictEqual({
        l: ['a'],
      });
      expect(applyJsonPatch({ l: ['a', 'b'] }, [{ op: 'remove', path: '/l/+0' }])).toStrictEqual({
        l: ['b'],
      });
    });

    it('passes a test of a missing key against null', () => {
      expect(applyJsonPatch({ a: 1 }, [{ op: 'test', path: '/b', value: null }])).toStrictEqual({ a: 1 });
      expect(statusOf(() => applyJsonPatch({ a: 1 }, [{ op: 'test', path: '/b', value: 1 }]))).toStrictEqual(
        UNPROCESSABLE,
      );
      expect(statusOf(() => applyJsonPatch({ a: 1 }, [{ op: 'test', path: '/a' }]))).toStrictEqual(
        UNPROCESSABLE,
      );
    });

    it('compares objects structurally in a test, whatever the key order', () => {
      const doc = { m: { x: 1, y: [1, { z: true }] } };
      expect(
        applyJsonPatch(doc, [{ op: 'test', path: '/m', value: { y: [1, { z: true }], x: 1 } }]),
      ).toStrictEqual(doc);
      expect(applyJsonPatch(doc, [{ op: 'test', path: '', value: doc }])).toStrictEqual(doc);
    });

    it('copies null from a missing key', () => {
      expect(applyJsonPatch({ a: 1 }, [{ op: 'copy', from: '/missing', path: '/b' }])).toStrictEqual({
        a: 1,
        b: null,
      });
    });

    it('replaces the whole document at the root', () => {
      expect(applyJsonPatch({ a: 1 }, [{ op: 'replace', path: '', value: { b: 2 } }])).toStrictEqual({
        b: 2,
      });
    });

    it('resolves a path without a leading slash from its second segment', () => {
      expect(applyJsonPatch({ a: 1 }, [{ op: 'add', path: 'ignored/b', value: 2 }])).toStrictEqual({
        a: 1,
        b: 2,
      });
    });
  });

  it('refuses to touch the prototype chain', () => {
    const patch = [{ op: 'add', path: '/__proto__/polluted', value: true }];
    expect(statusOf(() => applyJsonPatch({ a: 1 }, patch))).toStrictEqual(UNPROCESSABLE);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('applies nothing for a null body', () => {
    expect(applyJsonPatch({ a: 1 }, null)).toStrictEqual({ a: 1 });
  });

  describe('bodies that are not lists of operations (400)', () => {
    it('reports the strict decoder of the default fieldValidation', () => {
      expect(statusOf(() => applyJsonPatch({}, { op: 'add' }))).toStrictEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message:
          'error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp',
        reason: 'BadRequest',
        code: 400,
      });
      expect(statusOf(() => applyJsonPatch({}, ['add']))).toMatchObject({
        code: 400,
        message:
          'error decoding patch: json: cannot unmarshal string into Go value of type handlers.jsonPatchOp',
      });
      expect(statusOf(() => applyJsonPatch({}, [{ op: 1, path: '/a' }]))).toMatchObject({
        code: 400,
        message:
          'error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.op of type string',
      });
    });

    it('reports the json-patch decoder with fieldValidation=Ignore', () => {
      const ignore = { fieldValidation: 'Ignore' as const };
      expect(statusOf(() => applyJsonPatch({}, 'x', ignore))).toMatchObject({
        code: 400,
        reason: 'BadRequest',
        message: 'json: cannot unmarshal string into Go value of type jsonpatch.Patch',
      });
      expect(statusOf(() => applyJsonPatch({}, [[]], ignore))).toMatchObject({
        code: 400,
        message: 'json: cannot unmarshal array into Go value of type jsonpatch.Operation',
      });
      // Without the strict decoder, a non-string op only fails when applied.
      expect(statusOf(() => applyJsonPatch({}, [{ op: 1, path: '/a' }], ignore))).toStrictEqual(
        UNPROCESSABLE,
      );
    });
  });

  it(`answers 413 beyond ${MAX_JSON_PATCH_OPERATIONS} operations`, () => {
    const patch = Array.from({ length: MAX_JSON_PATCH_OPERATIONS + 1 }, () => ({
      op: 'test',
      path: '/a',
      value: 1,
    }));
    expect(statusOf(() => applyJsonPatch({ a: 1 }, patch))).toMatchObject({
      code: 413,
      reason: 'RequestEntityTooLarge',
      message: 'Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001',
    });
    expect(applyJsonPatch({ a: 1 }, patch.slice(1))).toStrictEqual({ a: 1 });
  });
});
