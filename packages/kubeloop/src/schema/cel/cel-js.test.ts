import { describe, expect, it } from 'vitest';
import { defineResource } from '../define/resource.js';
import { Type } from '../define/typebox.js';
import { celJsLoaded } from './cel-js.js';

// One file of its own: cel-js must not have been loaded by another test in this module graph.
describe('cel-js loads on the first rule', () => {
  it('is not loaded by a resource without x-kubernetes-validations, whose CRD is still checked', () => {
    const Plain = defineResource({
      group: 'example.com',
      version: 'v1',
      kind: 'Plain',
      spec: Type.Object({ replicas: Type.Integer({ minimum: 1 }) }),
    });
    expect(
      Plain.validate({
        apiVersion: 'example.com/v1',
        kind: 'Plain',
        metadata: { name: 'a' },
        spec: { replicas: 0 },
      }),
    ).toEqual([expect.objectContaining({ field: 'spec.replicas' })]);
    expect(() =>
      defineResource({
        group: 'example.com',
        version: 'v1',
        kind: 'Bad',
        spec: Type.Object({ a: Type.String({ default: 1 }) }),
      }),
    ).toThrow(/Invalid value/);
    expect(celJsLoaded()).toBe(false);
  });

  it('is loaded, synchronously, by the first rule: compiled at definition, evaluated on validate', () => {
    const rule = { rule: 'self.min <= self.max', message: 'min must not exceed max' };
    const Range = defineResource({
      group: 'example.com',
      version: 'v1',
      kind: 'Range',
      spec: Type.Object({ min: Type.Integer(), max: Type.Integer() }),
      validations: [],
    });
    expect(celJsLoaded()).toBe(false);
    const Ruled = defineResource({
      group: 'example.com',
      version: 'v1',
      kind: 'Ruled',
      spec: Type.Object({ min: Type.Integer(), max: Type.Integer() }, { 'x-kubernetes-validations': [rule] }),
    });
    expect(celJsLoaded()).toBe(true);
    const obj = { apiVersion: 'example.com/v1', metadata: { name: 'a' }, spec: { min: 2, max: 1 } };
    expect(Ruled.validate({ ...obj, kind: 'Ruled' })).toEqual([
      expect.objectContaining({ field: 'spec', message: expect.stringContaining('min must not exceed max') }),
    ]);
    expect(Range.validate({ ...obj, kind: 'Range' })).toEqual([]);
    // A rule that does not compile is refused at definition, as the API server refuses the CRD.
    expect(() =>
      defineResource({
        group: 'example.com',
        version: 'v1',
        kind: 'Broken',
        spec: Type.Object(
          { min: Type.Integer() },
          { 'x-kubernetes-validations': [{ rule: 'self.nope > 1' }] },
        ),
      }),
    ).toThrow(/x-kubernetes-validations\[0\]\.rule/);
  });
});
