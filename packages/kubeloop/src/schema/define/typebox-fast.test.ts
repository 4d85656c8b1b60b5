import { createRequire } from 'node:module';
import * as TypeBox from 'typebox';
import { describe, expect, it } from 'vitest';
import { Type } from './typebox.js';
import { fastBuilders } from './typebox-fast.js';

type Builder = typeof TypeBox.Type;
const require = createRequire(import.meta.url);
const bundle = require('../../../vendor/typebox.cjs') as typeof TypeBox & { __version: string };

/**
 * A value as far as TypeBox's builders can tell two apart: every own key in order, each one's
 * descriptor (enumerable, writable, configurable, value compared the same way), the prototype and
 * whether it is frozen or extensible. A throw is its error's name and message.
 */
function described(v: unknown, seen = new Set<unknown>()): unknown {
  if (typeof v === 'function') return `function ${v.name}`;
  if (typeof v === 'symbol' || typeof v === 'bigint') return `${typeof v} ${String(v)}`;
  if (typeof v !== 'object' || v === null) return v;
  if (v instanceof RegExp) return `regexp ${String(v)}`;
  if (seen.has(v)) return 'cycle';
  seen.add(v);
  const proto = Object.getPrototypeOf(v);
  const props = Reflect.ownKeys(v).map((k) => {
    const { value, get, set, ...flags } = Object.getOwnPropertyDescriptor(v, k)!;
    const content =
      get || set ? { get: described(get), set: described(set) } : { value: described(value, seen) };
    return [typeof k === 'symbol' ? String(k) : k, { ...flags, ...content }];
  });
  seen.delete(v);
  return {
    proto: proto === null ? null : (proto.constructor?.name ?? 'anonymous'),
    frozen: Object.isFrozen(v),
    extensible: Object.isExtensible(v),
    props,
  };
}

function outcome(build: () => unknown): unknown {
  try {
    return described(build());
  } catch (e) {
    return { threw: (e as Error).name, message: (e as Error).message };
  }
}

// Options as operators write them, and the odd ones TypeBox's spread and markers must treat alike.
const withProto = JSON.parse('{"__proto__": {"x": 1}, "description": "p"}');
const withSymbol = { [Symbol.for('s')]: 1, description: 's' };
const withGetter = {
  get description() {
    return 'from a getter';
  },
};
const withHiddenOption = Object.defineProperty({ a: 1 }, 'hidden', { value: 2, enumerable: false });
const OPTIONS: unknown[] = [
  undefined,
  null,
  {},
  { description: 'A field.' },
  { default: 1 },
  { default: { a: [1, 2] } },
  { minimum: 1, maximum: 10, exclusiveMinimum: 0, multipleOf: 1 },
  { minLength: 1, maxLength: 63, pattern: '^[a-z]+$', format: 'date-time' },
  { enum: ['a', 'b'] },
  { examples: ['x', 'y'], title: 'T', nullable: true },
  {
    'x-kubernetes-validations': [{ rule: 'self > 0', message: 'positive' }],
    'x-kubernetes-int-or-string': true,
  },
  {
    'x-kubernetes-preserve-unknown-fields': true,
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['name'],
  },
  { type: 'overridden', description: 'replaces the type' },
  { '~kind': 'Other', '~optional': true },
  { additionalProperties: false, minProperties: 1 },
  withProto,
  withSymbol,
  withGetter,
  withHiddenOption,
];

const LITERALS: unknown[] = ['a', '', 0, 1, -1.5, true, false, 10n];
const BAD_LITERALS: unknown[] = [Number.NaN, Number.POSITIVE_INFINITY, null, undefined, {}, Symbol.for('x')];

/** Every fast builder, alone and with every option set; then nested and mixed compositions. */
function matrix(T: Builder): Array<[string, () => unknown]> {
  const cases: Array<[string, () => unknown]> = [];
  const add = (name: string, build: () => unknown) => cases.push([name, build]);
  const any = T as unknown as Record<string, (...a: unknown[]) => never>;
  OPTIONS.forEach((o, i) => {
    for (const b of ['String', 'Integer', 'Number', 'Boolean', 'Null'] as const)
      add(`${b} #${i}`, () => any[b]!(o));
    add(`Array #${i}`, () => T.Array(T.String(), o as never));
    add(`Union #${i}`, () => T.Union([T.Literal('a'), T.Integer()], o as never));
    add(`Object #${i}`, () => T.Object({ a: T.String(), b: T.Optional(T.Number()) }, o as never));
    add(`Literal #${i}`, () => T.Literal('v', o as never));
    add(`Enum #${i}`, () => T.Enum(['a', 'b'], o as never));
    add(`Record #${i}`, () => T.Record(T.String(), T.Integer(), o as never));
  });
  for (const v of LITERALS) add(`Literal ${String(v)}`, () => any.Literal!(v));
  for (const v of BAD_LITERALS) add(`Literal (bad) ${String(v)}`, () => any.Literal!(v));
  add('Enum of a TypeScript string enum', () => T.Enum({ A: 'a', B: 'b' }));
  add('Enum of a TypeScript numeric enum', () => T.Enum({ A: 0, B: 1, 0: 'A', 1: 'B' }));
  add('Enum of numbers', () => T.Enum([1, 2, 3]));
  add('Enum (bad) undefined', () => any.Enum!(undefined));
  add('empty Object', () => T.Object({}));
  add('Object, all optional (no required)', () =>
    T.Object({ a: T.Optional(T.String()), b: T.Optional(T.Null()) }),
  );
  add('Object with a non-enumerable property', () =>
    T.Object(
      Object.defineProperty({ a: T.String() }, 'b', { value: T.Integer(), enumerable: false }) as never,
    ),
  );
  add('Object of a plain optional-marked object', () =>
    T.Object({ a: { type: 'string', '~optional': true } } as never),
  );
  add('Object (bad) null', () => any.Object!(null));
  add('Optional of Optional', () => T.Optional(T.Optional(T.String({ minLength: 1 }))));
  add('Optional of Readonly', () => T.Optional(T.Readonly(T.Integer())));
  add('Optional of a plain object', () => T.Optional({ type: 'string' } as never));
  add('Optional of an object with unsafe keys', () =>
    T.Optional(JSON.parse('{"constructor": 1, "prototype": 2, "a": 3}')),
  );
  add('Optional of a symbol-keyed object', () => T.Optional({ [Symbol.for('k')]: 1, type: 'x' } as never));
  add('Optional of a Ref', () => T.Optional(T.Ref('A')));
  add('Optional of a Deferred (Partial of a Ref)', () => T.Optional(T.Partial(T.Ref('A'))));
  add('Optional of an Intersect', () =>
    T.Optional(T.Intersect([T.Object({ a: T.String() }), T.Object({ b: T.Null() })])),
  );
  add('Optional of a Cyclic', () =>
    T.Optional(T.Cyclic({ A: T.Object({ a: T.Optional(T.Ref('A')) }) }, 'A')),
  );
  add('Optional (bad) undefined', () => any.Optional!(undefined));
  add('Unsafe of a schema', () => T.Unsafe({ type: 'string', 'x-kubernetes-int-or-string': true }));
  add('Unsafe of a built schema', () => T.Unsafe(T.Optional(T.Object({ a: T.String() }))));
  add('Unsafe of Unsafe', () => T.Unsafe(T.Unsafe({ type: 'object' })));
  add('Unsafe (bad) null', () => any.Unsafe!(null));
  for (const key of [
    T.String(),
    T.Integer(),
    T.Number(),
    T.String({ pattern: '^[a-z]+$' }),
    T.String({ pattern: /^x/ as never }),
  ]) {
    add(`Record keyed by ${JSON.stringify(key)}`, () => T.Record(key, T.Boolean(), { description: 'd' }));
  }
  add('Record keyed by literals', () => T.Record(T.Union([T.Literal('a'), T.Literal('b')]), T.String()));
  add('Record keyed by a Literal', () => T.Record(T.Literal('a'), T.String()));
  add('Record keyed by an Enum', () => T.Record(T.Enum(['a', 'b']), T.String()));
  add('Record keyed by a Ref', () => T.Record(T.Ref('K'), T.String()));
  add('Record keyed by Any', () => T.Record(T.Any(), T.String()));
  add('Record (bad) null options', () => any.Record!(T.String(), T.String(), null));
  add('Union, empty', () => T.Union([]));
  add('nested: objects of arrays of unions of literals', () =>
    T.Object(
      {
        items: T.Array(
          T.Object({
            mode: T.Union([T.Literal('a'), T.Literal('b'), T.Null()], { default: 'a' }),
            tags: T.Optional(T.Array(T.Union([T.Literal(1), T.Literal(true)]), { maxItems: 3 })),
            labels: T.Optional(T.Record(T.String(), T.String())),
          }),
          { 'x-kubernetes-list-type': 'atomic' },
        ),
        nested: T.Optional(T.Object({ deep: T.Object({ x: T.Optional(T.Optional(T.Boolean())) }) })),
      },
      { description: 'root', additionalProperties: false },
    ),
  );
  // Fast-built schemas given to the bundle's builders.
  const ab = () =>
    T.Object({ a: T.String({ minLength: 1 }), b: T.Optional(T.Number()) }, { description: 'ab' });
  add('Partial', () => T.Partial(ab()));
  add('Required of Partial', () => T.Required(T.Partial(ab())));
  add('Pick', () => T.Pick(ab(), ['a']));
  add('Omit', () => T.Omit(ab(), ['a']));
  add('KeyOf', () => T.KeyOf(ab()));
  add('Index', () => T.Index(ab(), ['a']));
  add('Intersect', () => T.Intersect([ab(), T.Object({ c: T.Boolean() })]));
  add('Evaluate of Intersect', () => T.Evaluate(T.Intersect([ab(), T.Object({ c: T.Optional(T.Null()) })])));
  add('Ref inside an Object', () => T.Object({ r: T.Ref('A'), s: T.Optional(T.Ref('B')) }));
  add('Readonly of Optional', () => T.Readonly(T.Optional(T.String())));
  add('Module', () => T.Module({ A: T.Object({ b: T.Ref('B') }), B: T.Array(T.String()) }));
  add('Cyclic', () =>
    T.Cyclic({ Node: T.Object({ next: T.Optional(T.Ref('Node')), v: T.Integer() }) }, 'Node'),
  );
  add('Tuple of fast schemas', () => T.Tuple([T.String(), T.Optional(T.Integer())]));
  add('Script with fast schemas', () => T.Script({ A: ab() }, '{ x: A, y?: string }'));
  return cases;
}

/** A builder of fast builders over the bundle's, where any fallback of theirs throws. */
function fastOnly(): Builder {
  const fast = fastBuilders((name) => () => {
    throw new Error(`fell back to the bundle for ${name}`);
  });
  return { ...bundle.Type, ...fast } as unknown as Builder;
}

describe('the fast TypeBox builders', () => {
  const ours = matrix(Type);
  const bundled = matrix(bundle.Type);
  const installed = matrix(TypeBox.Type);

  it('build the same objects as the bundle and the installed TypeBox, case by case', () => {
    expect(ours.length).toBeGreaterThan(250);
    for (const [i, [name, build]] of ours.entries()) {
      const expected = outcome(bundled[i]![1]);
      expect(outcome(build), name).toEqual(expected);
      expect(outcome(installed[i]![1]), name).toEqual(expected);
    }
  });

  it('build without the bundle every case but those TypeBox must decide', () => {
    const fallbacks = matrix(fastOnly())
      .filter(([, build]) => {
        const o = outcome(build) as { message?: string };
        return o.message?.startsWith('fell back') === true;
      })
      .map(([name]) => name);
    expect(fallbacks).toEqual([
      // TypeBox's Record reads the keys of its options: null is TypeBox's to refuse.
      `Record #${OPTIONS.indexOf(null)}`,
      ...BAD_LITERALS.map((v) => `Literal (bad) ${String(v)}`),
      'Enum (bad) undefined',
      'Object (bad) null',
      'Optional (bad) undefined',
      'Unsafe (bad) null',
      'Record keyed by literals',
      'Record keyed by a Literal',
      'Record keyed by an Enum',
      'Record keyed by a Ref',
      'Record keyed by Any',
      'Record (bad) null options',
    ]);
  });

  it('are written for the bundled TypeBox, whose settings no one can change', () => {
    // Each fast builder repeats TypeBox 1.4.3's: another version's must be read again.
    expect(bundle.__version).toBe('1.4.3');
    // Settings (immutableTypes, enumerableKind) would change the objects; the bundle hides them.
    expect(Object.keys(bundle).filter((k) => /settings|memory|system/i.test(k))).toEqual([]);
  });

  it('offers every builder of the bundle, in its order', () => {
    expect(Object.keys(Type)).toEqual(Object.keys(bundle.Type));
  });
});
