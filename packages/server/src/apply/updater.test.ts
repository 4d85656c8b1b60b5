import { describe, expect, it } from 'vitest';
import { pathString } from './path.js';
import { openApiAtom } from './schema.js';
import { FieldSet } from './set.js';
import { testSchema } from './typed.test.js';
import { Conflicts, type ManagedFieldSets, Updater } from './updater.js';

type Op =
  | { apply: string; config: unknown; force?: boolean; conflicts?: string[] }
  | { update: string; object: unknown };

interface Case {
  name: string;
  ops: Op[];
  object: unknown;
  /** Owned paths by manager. */
  managed: Record<string, string[]>;
}

const updater = new Updater(openApiAtom(testSchema), FieldSet.of([{ field: 'status' }]));

function run(ops: Op[]): { object: unknown; managers: ManagedFieldSets } {
  let object: unknown = {};
  let managers: ManagedFieldSets = new Map();
  for (const op of ops) {
    if ('apply' in op) {
      try {
        const r = updater.apply(object, op.config, 'v1', managers, op.apply, op.force ?? false);
        expect(op.conflicts, `apply by ${op.apply} should have conflicted`).toBeUndefined();
        if (r.object !== undefined) object = r.object;
        managers = r.managers;
      } catch (err) {
        if (!(err instanceof Conflicts) || !op.conflicts) throw err;
        expect(err.conflicts.map((c) => `${c.manager} ${pathString(c.path)}`)).toEqual(op.conflicts);
      }
    } else {
      managers = updater.update(object, op.object, 'v1', managers, op.update).managers;
      object = op.object;
    }
  }
  return { object, managers };
}

const owned = (managers: ManagedFieldSets) =>
  Object.fromEntries([...managers].map(([m, vs]) => [m, vs.set.paths().map(pathString).sort()]));

const cases: Case[] = [
  {
    name: 'apply creates fields and owns exactly its configuration',
    ops: [{ apply: 'a', config: { name: 'x', labels: { app: 'web' } } }],
    object: { name: 'x', labels: { app: 'web' } },
    managed: { a: ['.labels.app', '.name'] },
  },
  {
    name: 'a field the manager stops applying is removed',
    ops: [
      { apply: 'a', config: { name: 'x', replicas: 2, labels: { app: 'web', tier: 'fe' } } },
      { apply: 'a', config: { name: 'x', labels: { app: 'web' } } },
    ],
    object: { name: 'x', labels: { app: 'web' } },
    managed: { a: ['.labels.app', '.name'] },
  },
  {
    name: 'two appliers share a field whose values agree, and it stays while one still applies it',
    ops: [
      { apply: 'a', config: { replicas: 3, name: 'x' } },
      { apply: 'b', config: { replicas: 3 } },
      { apply: 'a', config: { name: 'x' } },
    ],
    object: { name: 'x', replicas: 3 },
    managed: { a: ['.name'], b: ['.replicas'] },
  },
  {
    name: 'a different value is a conflict naming field and owner; force transfers ownership',
    ops: [
      { apply: 'a', config: { replicas: 3, name: 'x' } },
      { apply: 'b', config: { replicas: 5, name: 'y' }, conflicts: ['a .name', 'a .replicas'] },
      { apply: 'b', config: { replicas: 5 }, force: true },
    ],
    object: { name: 'x', replicas: 5 },
    managed: { a: ['.name'], b: ['.replicas'] },
  },
  {
    name: 'an update takes the fields it changes and drops the ones it removes',
    ops: [
      { apply: 'a', config: { replicas: 3, labels: { x: '1', y: '2' } } },
      { update: 'u', object: { replicas: 4, labels: { x: '1' } } },
    ],
    object: { replicas: 4, labels: { x: '1' } },
    managed: { a: ['.labels.x'], u: ['.replicas'] },
  },
  {
    name: 'an applier conflicts with an updater that changed its field',
    ops: [
      { update: 'u', object: { replicas: 1 } },
      { apply: 'a', config: { replicas: 2 }, conflicts: ['u .replicas'] },
      { apply: 'a', config: { replicas: 1 } },
    ],
    object: { replicas: 1 },
    managed: { a: ['.replicas'], u: ['.replicas'] },
  },
  {
    name: 'list-map items: each applier owns its own; removing one keeps the others',
    ops: [
      {
        apply: 'a',
        config: {
          containers: [
            { name: 'web', image: 'nginx' },
            { name: 'log', image: 'fluent' },
          ],
        },
      },
      { apply: 'b', config: { containers: [{ name: 'sidecar', image: 'envoy' }] } },
      { apply: 'a', config: { containers: [{ name: 'web', image: 'nginx' }] } },
    ],
    object: {
      containers: [
        { name: 'web', image: 'nginx' },
        { name: 'sidecar', image: 'envoy' },
      ],
    },
    managed: {
      a: ['.containers[name="web"]', '.containers[name="web"].image', '.containers[name="web"].name'],
      b: [
        '.containers[name="sidecar"]',
        '.containers[name="sidecar"].image',
        '.containers[name="sidecar"].name',
      ],
    },
  },
  {
    name: 'a list-map item applied by two managers survives until both stop applying it',
    ops: [
      { apply: 'a', config: { containers: [{ name: 'web', image: 'nginx' }] } },
      { apply: 'b', config: { containers: [{ name: 'web' }] } },
      { apply: 'a', config: { containers: [] } },
    ],
    object: { containers: [{ name: 'web' }] },
    managed: { b: ['.containers[name="web"]', '.containers[name="web"].name'] },
  },
  {
    name: 'set items merge by value and are removed one by one',
    ops: [
      { apply: 'a', config: { finalizers: ['x', 'shared'] } },
      { apply: 'b', config: { finalizers: ['y', 'shared'] } },
      { apply: 'a', config: { finalizers: [] } },
    ],
    object: { finalizers: ['y', 'shared'] },
    managed: { b: ['.finalizers[="shared"]', '.finalizers[="y"]'] },
  },
  {
    name: 'an atomic list is owned whole, so two different values conflict',
    ops: [
      { apply: 'a', config: { args: ['--x'] } },
      { apply: 'b', config: { args: ['--y'] }, conflicts: ['a .args'] },
    ],
    object: { args: ['--x'] },
    managed: { a: ['.args'] },
  },
  {
    name: 'an atomic map is replaced whole by a forced apply',
    ops: [
      { apply: 'a', config: { selector: { matchLabels: { a: '1' } } } },
      { apply: 'b', config: { selector: { matchLabels: { b: '2' } } }, force: true },
    ],
    object: { selector: { matchLabels: { b: '2' } } },
    managed: { b: ['.selector'] },
  },
  {
    name: 'a struct field nobody applies any more is removed with what is left inside it',
    ops: [
      { apply: 'a', config: { config: { feature: { enabled: true } }, name: 'x' } },
      { apply: 'a', config: { name: 'x' } },
    ],
    object: { name: 'x' },
    managed: { a: ['.name'] },
  },
  {
    name: 'fields an updater added are not pruned by an applier that never owned them',
    ops: [
      { apply: 'a', config: { labels: { a: '1' } } },
      { update: 'u', object: { labels: { a: '1', u: '2' } } },
      { apply: 'a', config: { labels: {} } },
    ],
    object: { labels: { u: '2' } },
    managed: { u: ['.labels.u'] },
  },
  {
    name: 'reset fields (status through the main resource) are owned by nobody',
    ops: [{ apply: 'a', config: { name: 'x', status: { ready: true } } }],
    object: { name: 'x', status: { ready: true } },
    managed: { a: ['.name'] },
  },
];

describe('Updater', () => {
  it.each(cases)('$name', (c) => {
    const { object, managers } = run(c.ops);
    expect(object).toEqual(c.object);
    expect(owned(managers)).toEqual(
      Object.fromEntries(Object.entries(c.managed).map(([k, v]) => [k, v.sort()])),
    );
  });

  it('reports an apply that changes nothing as no new object', () => {
    const first = updater.apply({}, { name: 'x' }, 'v1', new Map(), 'a', false);
    const again = updater.apply(first.object, { name: 'x' }, 'v1', first.managers, 'a', false);
    expect(again.object).toBeUndefined();
  });
});
