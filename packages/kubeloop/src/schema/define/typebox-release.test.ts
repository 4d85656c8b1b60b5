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
  it('is kept while builders are called, let go a second after the last call, loaded again on the next', () => {
    expect(loaded()).toBe(true);
    const spec = Type.Object({ replicas: Type.Integer({ minimum: 1 }) });
    vi.advanceTimersByTime(900);
    expect(loaded()).toBe(true);
    Type.String();
    vi.advanceTimersByTime(900);
    expect(loaded()).toBe(true);
    vi.advanceTimersByTime(100);
    expect(loaded()).toBe(false);

    // The same builders and the same schemas after a reload, composing schemas of the first load.
    expect(Object.keys(Type).sort()).toEqual(Object.keys(TypeBox.Type).sort());
    const status = Type.Object({ ready: Type.Boolean() });
    expect(loaded()).toBe(true);
    const root = Type.Object({ spec, status: Type.Optional(status) });
    const theirs = TypeBox.Type.Object({
      spec: TypeBox.Type.Object({ replicas: TypeBox.Type.Integer({ minimum: 1 }) }),
      status: TypeBox.Type.Optional(TypeBox.Type.Object({ ready: TypeBox.Type.Boolean() })),
    });
    expect(JSON.stringify(root)).toBe(JSON.stringify(theirs));
    expect(Object.keys(Type.ExtendsResult)).toEqual(
      expect.arrayContaining(Object.keys(TypeBox.Type.ExtendsResult)),
    );
  });
});
