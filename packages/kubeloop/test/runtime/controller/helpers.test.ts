/**
 * The reconcile helpers against the local control plane (create-or-update, create-or-patch,
 * the status writer, owner references) and as pure functions (conditions, predicates).
 */
import type { Condition as SchemaCondition } from 'kubeloop';
import type { ConfigMap, KubeObject } from 'kubeloop/client';
import {
  addFinalizer,
  and,
  annotationsChanged,
  createOrPatch,
  createOrUpdate,
  findCondition,
  generationChanged,
  labelsChanged,
  not,
  OwnerReferenceError,
  or,
  predicate,
  removeCondition,
  resourceVersionChanged,
  setCondition,
  setControllerReference,
  writeStatus,
} from 'kubeloop/runtime';
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import { type RuntimeEnv, startRuntimeEnv, Widget } from './helpers.js';

let t: RuntimeEnv;
beforeAll(async () => {
  t = await startRuntimeEnv();
  await t.namespace('h');
});
afterAll(() => t.stop());

const cm = (name: string): ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'h' },
});

describe('createOrUpdate / createOrPatch', () => {
  it('reports created, unchanged and updated', async () => {
    const set = (v: string) => (c: ConfigMap) => {
      c.data = { ...c.data, mode: v };
    };
    expect((await createOrUpdate(t.client, cm('cou'), set('a'))).result).toBe('created');
    expect((await createOrUpdate(t.client, cm('cou'), set('a'))).result).toBe('unchanged');
    const updated = await createOrUpdate(t.client, cm('cou'), set('b'));
    expect(updated.result).toBe('updated');
    expect(updated.object.data).toEqual({ mode: 'b' });
    await expect(
      createOrUpdate(t.client, cm('cou'), (c) => {
        c.metadata = { ...c.metadata, name: 'other' };
      }),
    ).rejects.toThrow(/name or namespace/);
  });

  it('patches only what the mutate function changed, status apart', async () => {
    const w: Widget = {
      apiVersion: 'runtime.kubeloop.dev/v1',
      kind: 'Widget',
      metadata: { name: 'cop', namespace: 'h' },
    };
    expect(
      (
        await createOrPatch(t.client, w, (o) => {
          o.spec = { size: 1 };
        })
      ).result,
    ).toBe('created');
    // Someone else sets a field the mutate function does not touch: it survives.
    await t.client.api(Widget, 'h').patch('cop', { spec: { color: 'red' } });
    const r1 = await createOrPatch(t.client, w, (o) => {
      o.spec = { ...o.spec, size: 2 };
    });
    expect(r1.result).toBe('updated');
    expect(r1.object.spec).toEqual({ size: 2, color: 'red' });
    const r2 = await createOrPatch(t.client, w, (o) => {
      o.status = { seen: 3 };
    });
    expect(r2.result).toBe('updatedStatusOnly');
    expect(r2.object.status).toEqual({ seen: 3 });
    const r3 = await createOrPatch(t.client, w, (o) => {
      o.spec = { ...o.spec, size: 3 };
      o.status = { seen: 4 };
    });
    expect(r3.result).toBe('updatedStatus');
    expect((await createOrPatch(t.client, w, () => undefined)).result).toBe('unchanged');
  });
});

describe('writeStatus', () => {
  it('writes only when the status changed', async () => {
    const created = await t.client.api(Widget, 'h').create({ metadata: { name: 'st' }, spec: { size: 1 } });
    const first = await writeStatus(t.client, created, { seen: 1 });
    expect(first.changed).toBe(true);
    const again = await writeStatus(t.client, first.object, { seen: 1 });
    expect(again.changed).toBe(false);
    expect(again.object.metadata?.resourceVersion).toBe(first.object.metadata?.resourceVersion);
  });
});

describe('finalizers', () => {
  it('never adds a finalizer once deletion started', async () => {
    const deleting: KubeObject = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'gone', namespace: 'h', deletionTimestamp: '2026-01-01T00:00:00Z' },
    };
    // No request is made: the object does not even exist on the server.
    expect(await addFinalizer(t.client, deleting, 'x/y')).toBe(deleting);
  });
});

describe('setControllerReference', () => {
  const owner: Widget = {
    apiVersion: 'runtime.kubeloop.dev/v1',
    kind: 'Widget',
    metadata: { name: 'o', namespace: 'h', uid: 'u-1' },
  };

  it('sets one controller reference and refuses a second controller or another namespace', () => {
    const child = setControllerReference(owner, cm('child'));
    expect(child.metadata?.ownerReferences).toEqual([
      {
        apiVersion: 'runtime.kubeloop.dev/v1',
        kind: 'Widget',
        name: 'o',
        uid: 'u-1',
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    // Setting it again is idempotent.
    expect(setControllerReference(owner, child).metadata?.ownerReferences).toHaveLength(1);
    const other: Widget = { ...owner, metadata: { name: 'p', namespace: 'h', uid: 'u-2' } };
    expect(() => setControllerReference(other, child)).toThrow(OwnerReferenceError);
    const elsewhere: ConfigMap = { ...cm('x'), metadata: { name: 'x', namespace: 'other' } };
    expect(() => setControllerReference(owner, elsewhere)).toThrow(/cross-namespace/);
  });

  it('is accepted by the server', async () => {
    const w = await t.client.api(Widget, 'h').create({ metadata: { name: 'owner' } });
    const child = await t.client.create(setControllerReference(w, cm('owned')));
    expect(child.metadata?.ownerReferences?.[0]?.uid).toBe(w.metadata?.uid);
  });
});

describe('conditions', () => {
  it('moves lastTransitionTime only when the status changes', () => {
    const t0 = new Date('2026-01-01T00:00:00Z');
    const t1 = new Date('2026-01-01T01:00:00Z');
    const c0 = setCondition(
      undefined,
      { type: 'Ready', status: 'False', reason: 'Starting', observedGeneration: 1 },
      t0,
    );
    const c1 = setCondition(
      c0,
      { type: 'Ready', status: 'False', reason: 'StillStarting', observedGeneration: 2 },
      t1,
    );
    expect(findCondition(c1, 'Ready')).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'StillStarting',
      message: '',
      lastTransitionTime: '2026-01-01T00:00:00Z',
      observedGeneration: 2,
    });
    const c2 = setCondition(c1, { type: 'Ready', status: 'True', reason: 'Up' }, t1);
    expect(findCondition(c2, 'Ready')?.lastTransitionTime).toBe('2026-01-01T01:00:00Z');
    expect(findCondition(c2, 'Ready')?.observedGeneration).toBe(2);
    expect(c0).toHaveLength(1);
    expect(findCondition(c0, 'Ready')?.reason).toBe('Starting');
  });

  it('keeps the element type of a status declared with Kube.Conditions() (status narrowed to True/False/Unknown)', () => {
    const declared: SchemaCondition[] = [];
    const next = setCondition(declared, { type: 'Ready', status: 'True', reason: 'Up' });
    expectTypeOf(next).toEqualTypeOf<SchemaCondition[]>();
    expectTypeOf(removeCondition(next, 'Ready')).toEqualTypeOf<SchemaCondition[]>();
    expectTypeOf(findCondition(next, 'Ready')).toEqualTypeOf<SchemaCondition | undefined>();
    expect(next[0]?.status).toBe('True');
  });
});

describe('predicates', () => {
  const obj = (
    generation: number,
    labels: Record<string, string> = {},
    rv = '1',
    annotations = {},
  ): KubeObject => ({
    metadata: { generation, labels, resourceVersion: rv, annotations },
  });

  it('filter updates by what changed', () => {
    expect(generationChanged().update?.(obj(1), obj(2))).toBe(true);
    expect(generationChanged().update?.(obj(1), obj(1, { a: 'b' }))).toBe(false);
    expect(labelsChanged().update?.(obj(1), obj(1, { a: 'b' }))).toBe(true);
    expect(labelsChanged().update?.(obj(1, { a: 'b' }), obj(2, { a: 'b' }))).toBe(false);
    expect(annotationsChanged().update?.(obj(1), obj(1, {}, '1', { x: 'y' }))).toBe(true);
    expect(resourceVersionChanged().update?.(obj(1, {}, '1'), obj(1, {}, '1'))).toBe(false);
    const either = or(generationChanged(), labelsChanged());
    expect(either.update?.(obj(1), obj(1, { a: 'b' }))).toBe(true);
    const both = and(generationChanged(), labelsChanged());
    expect(both.update?.(obj(1), obj(2))).toBe(false);
    expect(not(generationChanged()).update?.(obj(1), obj(1))).toBe(true);
    const custom = predicate((o) => o.metadata?.labels?.managed === 'true');
    expect(custom.create?.(obj(1, { managed: 'true' }))).toBe(true);
    expect(custom.delete?.(obj(1))).toBe(false);
  });
});
