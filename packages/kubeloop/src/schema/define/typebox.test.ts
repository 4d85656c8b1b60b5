import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import * as TypeBox from 'typebox';
import { describe, expect, it } from 'vitest';
import { Type } from './typebox.js';

/** Every own property, enumerable or not (TypeBox marks kinds with non-enumerable `~kind`). */
function described(v: unknown): unknown {
  if (typeof v === 'function') return 'function';
  if (typeof v !== 'object' || v === null) return v;
  const out: Record<string, unknown> = {};
  for (const k of Reflect.ownKeys(v)) {
    const d = Object.getOwnPropertyDescriptor(v, k)!;
    out[`${String(k)}${d.enumerable ? '' : ' (hidden)'}`] = described(d.get ? 'getter' : d.value);
  }
  return Array.isArray(v) ? { array: out } : out;
}

/** Schemas through most builders, including the computed ones (Script, Evaluate, Pick). */
function schemas(T: typeof TypeBox.Type): unknown[] {
  const ab = T.Object({ a: T.String(), b: T.Number() });
  return [
    T.Object(
      {
        s: T.String({ minLength: 1, format: 'date-time' }),
        o: T.Optional(T.Integer({ minimum: 1, maximum: 10 })),
        a: T.Array(T.Number(), { maxItems: 3 }),
        u: T.Union([T.Literal('x'), T.Literal('y')]),
        r: T.Record(T.String(), T.Boolean()),
        n: T.Union([T.Integer(), T.String()]),
        i: T.Intersect([T.Object({ x: T.String() }), T.Object({ y: T.Null() })]),
        e: T.Enum(['a', 'b']),
        k: T.Unsafe<string>({ type: 'string', 'x-kubernetes-int-or-string': true }),
        any: T.Any(),
        unknown: T.Unknown(),
        ro: T.Readonly(T.String()),
        t: T.Tuple([T.String(), T.Number()]),
      },
      { additionalProperties: false, description: 'd' },
    ),
    T.Partial(ab),
    T.Required(T.Partial(ab)),
    T.Pick(ab, ['a']),
    T.Omit(ab, ['a']),
    T.KeyOf(ab),
    T.Evaluate(T.Intersect([ab, T.Object({ c: T.Boolean() })])),
    T.Script('{ a: string, b?: number[] }'),
  ];
}

describe('vendored TypeBox', () => {
  it('builds the same schemas as the installed TypeBox, and offers every builder it offers', () => {
    expect(Object.keys(Type).sort()).toEqual(Object.keys(TypeBox.Type).sort());
    expect(schemas(Type).map(described)).toEqual(schemas(TypeBox.Type).map(described));
  });

  it('is the bundle of the installed TypeBox (npm run build:typebox -w packages/kubeloop)', async () => {
    const root = fileURLToPath(new URL('../../..', import.meta.url));
    await promisify(execFile)(process.execPath, ['scripts/bundle-typebox.mjs', '--check'], { cwd: root });
  }, 60_000);
});
