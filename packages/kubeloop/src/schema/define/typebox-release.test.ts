import { createRequire } from 'node:module';
import * as TypeBox from 'typebox';
import { afterAll, describe, expect, it, vi } from 'vitest';

// A file of its own, with fake timers before the module loads: the test reads this process's
// module cache and drives the second after which the bundle is let go.
vi.useFakeTimers();
const { Type } = await import('./typebox.js');
afterAll(() => vi.useRealTimers());

const require = createRequire(import.meta.url);
const BUNDLE = require.resolve('../../../vendor/typebox.cjs');
const loaded = () => BUNDLE in require.cache;

describe('the TypeBox bundle behind Type', () => {
  it('is not loaded by the fast builders, nor by loading Type', () => {
    expect(loaded()).toBe(false);
    const spec = Type.Object({
      name: Type.String({ minLength: 1 }),
      replicas: Type.Optional(Type.Integer({ minimum: 1 })),
      mode: Type.Union([Type.Literal('a'), Type.Literal('b'), Type.Null()]),
      labels: Type.Record(Type.String(), Type.String()),
      ports: Type.Array(Type.Number()),
      on: Type.Boolean(),
      kind: Type.Enum(['x', 'y']),
      raw: Type.Unsafe<string>({ type: 'string' }),
    });
    expect(loaded()).toBe(false);
    expect(spec.required).toEqual(['name', 'mode', 'labels', 'ports', 'on', 'kind', 'raw']);
  });

  it('is kept while builders are called, let go a second after the last call, loaded again on the next', () => {
    const spec = Type.Partial(Type.Object({ replicas: Type.Integer({ minimum: 1 }) }));
    expect(loaded()).toBe(true);
    vi.advanceTimersByTime(900);
    expect(loaded()).toBe(true);
    Type.Required(spec);
    vi.advanceTimersByTime(900);
    expect(loaded()).toBe(true);
    vi.advanceTimersByTime(100);
    expect(loaded()).toBe(false);

    // The same builders and the same schemas after a reload, composing schemas of the first load.
    expect(Object.keys(Type).sort()).toEqual(Object.keys(TypeBox.Type).sort());
    const status = Type.Intersect([Type.Object({ ready: Type.Boolean() })]);
    expect(loaded()).toBe(true);
    const root = Type.Object({ spec, status: Type.Optional(status) });
    const theirs = TypeBox.Type.Object({
      spec: TypeBox.Type.Partial(TypeBox.Type.Object({ replicas: TypeBox.Type.Integer({ minimum: 1 }) })),
      status: TypeBox.Type.Optional(
        TypeBox.Type.Intersect([TypeBox.Type.Object({ ready: TypeBox.Type.Boolean() })]),
      ),
    });
    expect(JSON.stringify(root)).toBe(JSON.stringify(theirs));
    expect(Object.keys(Type.ExtendsResult)).toEqual(
      expect.arrayContaining(Object.keys(TypeBox.Type.ExtendsResult)),
    );
  });
});
