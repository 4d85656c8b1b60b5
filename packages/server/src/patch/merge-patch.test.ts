import { ApiError } from 'kubeloop/api';
import { describe, expect, it } from 'vitest';
import { applyMergePatch } from './merge-patch.js';

const statusOf = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiError) return err.status;
    throw err;
  }
  throw new Error('expected an ApiError');
};

describe('applyMergePatch', () => {
  it('walks values nested deeper than the call stack allows (no recursion)', () => {
    let deep: unknown = [1, null];
    for (let i = 0; i < 20_000; i++) deep = [deep, null];
    const out = applyMergePatch({ a: 1 }, { b: deep }) as { b: unknown };
    let depth = 0;
    for (let v = out.b; Array.isArray(v); v = v[0]) {
      expect(v).toHaveLength(1);
      depth++;
    }
    expect(depth).toBe(20_001);
  });

  // RFC 7386 appendix A, for the examples whose target and patch are objects.
  it.each([
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ])('merges %j with %j', (original, patch, expected) => {
    expect(applyMergePatch(original, patch)).toStrictEqual(expected);
  });

  it('removes a ConfigMap data key with null and adds another', () => {
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { a: '1', b: '2' } };
    expect(applyMergePatch(cm, { data: { a: null, c: '3' } })).toStrictEqual({
      ...cm,
      data: { b: '2', c: '3' },
    });
  });

  it('replaces lists wholesale', () => {
    const original = { spec: { containers: [{ name: 'a', image: 'x' }, { name: 'b' }] } };
    expect(applyMergePatch(original, { spec: { containers: [{ name: 'a', image: 'y' }] } })).toStrictEqual({
      spec: { containers: [{ name: 'a', image: 'y' }] },
    });
  });

  it('drops nulls from added values, arrays included (json-patch v4)', () => {
    expect(applyMergePatch({}, { a: [1, null, { b: null, c: 2 }] })).toStrictEqual({ a: [1, { c: 2 }] });
  });

  it('keeps nulls when an array replaces an object', () => {
    expect(applyMergePatch({ a: { x: 1 } }, { a: [null] })).toStrictEqual({ a: [null] });
  });

  it('never modifies its inputs', () => {
    const original = { metadata: { labels: { a: '1', b: '2' } } };
    const patch = { metadata: { labels: { a: null, c: { d: null } } } };
    const before = structuredClone([original, patch]);
    applyMergePatch(original, patch);
    expect([original, patch]).toStrictEqual(before);
  });

  it('treats keys named like Object.prototype members as plain data', () => {
    const original = JSON.parse('{"data":{"constructor":"a"}}') as unknown;
    const patch = JSON.parse('{"data":{"constructor":null,"__proto__":{"polluted":true}}}') as unknown;
    const result = applyMergePatch(original, patch) as { data: Record<string, unknown> };
    expect(Object.keys(result.data)).toStrictEqual(['__proto__']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  describe('bodies that are not objects', () => {
    it('rejects them while decoding (fieldValidation Warn, the default, or Strict)', () => {
      expect(statusOf(() => applyMergePatch({ a: 1 }, ['x']))).toStrictEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message:
          'error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}',
        reason: 'BadRequest',
        code: 400,
      });
      expect(statusOf(() => applyMergePatch({ a: 1 }, 'x', { fieldValidation: 'Strict' }))).toMatchObject({
        code: 400,
        message:
          'error decoding patch: json: cannot unmarshal string into Go value of type map[string]interface {}',
      });
      expect(statusOf(() => applyMergePatch({ a: 1 }, null))).toMatchObject({
        code: 400,
        message: 'Invalid JSON Patch',
      });
    });

    it('with fieldValidation=Ignore, a list becomes the document and scalars are rejected', () => {
      expect(applyMergePatch({ a: 1 }, [1, null], { fieldValidation: 'Ignore' })).toStrictEqual([1]);
      for (const body of [null, 'x', 3, true]) {
        expect(statusOf(() => applyMergePatch({ a: 1 }, body, { fieldValidation: 'Ignore' }))).toMatchObject({
          code: 400,
          reason: 'BadRequest',
          message: 'Invalid JSON Patch',
        });
      }
    });
  });
});
