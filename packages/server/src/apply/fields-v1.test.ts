import { describe, expect, it } from 'vitest';
import { fromFieldsV1, toFieldsV1 } from './fields-v1.js';
import { FieldSet } from './set.js';

describe('FieldsV1 encodings shared between writes', () => {
  it('encodes a set once, frozen, and reads that encoding back as the same set', () => {
    const s = FieldSet.of([{ field: 'spec' }, { field: 'replicas' }], [{ field: 'metadata' }]);
    const encoded = toFieldsV1(s);
    expect(JSON.stringify(encoded)).toBe('{"f:metadata":{},"f:spec":{"f:replicas":{}}}');
    expect(Object.isFrozen(encoded)).toBe(true);
    expect(Object.isFrozen(encoded['f:spec'])).toBe(true);
    expect(toFieldsV1(s)).toBe(encoded);
    expect(fromFieldsV1(encoded)).toBe(s);
  });

  it('reads a value that may still change afresh every time', () => {
    const value: Record<string, unknown> = { 'f:data': {} };
    const first = fromFieldsV1(value);
    value['f:metadata'] = {};
    const second = fromFieldsV1(value);
    expect(second).not.toBe(first);
    expect(JSON.stringify(toFieldsV1(second))).toBe('{"f:data":{},"f:metadata":{}}');
  });

  it('re-encodes a frozen stored value in canonical form rather than keeping it', () => {
    const stored = Object.freeze({ 'f:b': Object.freeze({}), 'f:a': Object.freeze({}) });
    const s = fromFieldsV1(stored);
    expect(fromFieldsV1(stored)).toBe(s);
    expect(JSON.stringify(toFieldsV1(s))).toBe('{"f:a":{},"f:b":{}}');
  });
});
