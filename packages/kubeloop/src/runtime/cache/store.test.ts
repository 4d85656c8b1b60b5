import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../client/types.js';
import { objectKey, splitKey } from '../keys.js';
import { NAMESPACE_INDEX, Store } from './store.js';
import { deepFreeze, stripManagedFields, toPartialObjectMetadata } from './transform.js';

interface Pod extends KubeObject {
  spec?: { nodeName?: string; volumes?: { name: string }[] };
}

const pod = (namespace: string, name: string, node?: string, labels?: Record<string, string>): Pod => ({
  metadata: { namespace, name, resourceVersion: '1', ...(labels && { labels }) },
  spec: { ...(node !== undefined && { nodeName: node }) },
});

function filled() {
  const store = new Store<Pod>({ indexers: { node: (p) => p.spec?.nodeName } });
  for (const p of [
    pod('a', 'web-1', 'n1', { app: 'web', tier: 'front' }),
    pod('a', 'web-2', 'n2', { app: 'web', tier: 'front' }),
    pod('a', 'db', 'n1', { app: 'db' }),
    pod('b', 'web-1', 'n2', { app: 'web' }),
    pod('b', 'pending'),
  ])
    store.set(objectKey(p), p);
  return store;
}

const names = (ps: Pod[]) => ps.map(objectKey).sort();

describe('Store', () => {
  it('keys objects by namespace/name and lists them by namespace', () => {
    const store = filled();
    expect(store.size).toBe(5);
    expect(store.get('web-1', 'b')?.spec?.nodeName).toBe('n2');
    expect(store.getByKey('a/db')?.metadata?.name).toBe('db');
    expect(store.get('db')).toBeUndefined();
    expect(names(store.namespace('a').list())).toEqual(['a/db', 'a/web-1', 'a/web-2']);
    expect(names(store.byIndex(NAMESPACE_INDEX, 'b'))).toEqual(['b/pending', 'b/web-1']);
    expect(store.indexValues(NAMESPACE_INDEX).sort()).toEqual(['a', 'b']);
    expect([...store.keys()].sort()).toEqual(['a/db', 'a/web-1', 'a/web-2', 'b/pending', 'b/web-1']);
    store.delete('b/pending');
    store.delete('b/web-1');
    store.delete('b/never');
    expect(store.size).toBe(3);
    expect(store.indexValues(NAMESPACE_INDEX)).toEqual(['a']);
  });

  it('keeps cluster-scoped objects under their name', () => {
    const store = new Store<KubeObject>();
    store.set('node-1', { metadata: { name: 'node-1' } });
    expect(store.get('node-1')?.metadata?.name).toBe('node-1');
    expect(store.getByKey('node-1')).toBeDefined();
    expect([...store.keys()]).toEqual(['node-1']);
    expect(splitKey('node-1')).toEqual({ namespace: '', name: 'node-1' });
    expect(splitKey('a/b')).toEqual({ namespace: 'a', name: 'b' });
  });

  it('maintains custom indexes across updates and deletes', () => {
    const store = filled();
    expect(names(store.byIndex('node', 'n1'))).toEqual(['a/db', 'a/web-1']);
    store.set('a/db', pod('a', 'db', 'n2'));
    expect(names(store.byIndex('node', 'n1'))).toEqual(['a/web-1']);
    expect(names(store.byIndex('node', 'n2'))).toEqual(['a/db', 'a/web-2', 'b/web-1']);
    store.delete('a/web-1');
    expect(store.byIndex('node', 'n1')).toEqual([]);
    expect(store.indexValues('node').sort()).toEqual(['n2']);
    // An index added later covers what is already there; multi-valued index functions work.
    store.set('a/vol', {
      metadata: { namespace: 'a', name: 'vol' },
      spec: { volumes: [{ name: 'x' }, { name: 'y' }] },
    });
    store.addIndex('volume', (p) => p.spec?.volumes?.map((v) => v.name));
    expect(names(store.byIndex('volume', 'y'))).toEqual(['a/vol']);
    expect(() => store.addIndex('volume', () => undefined)).toThrow(/already has an index/);
    expect(() => store.addIndex(NAMESPACE_INDEX, () => undefined)).toThrow(/already has an index/);
    expect(() => store.byIndex('nope', 'x')).toThrow(/no index named "nope"/);
  });

  it('lists by label selector, in every selector form', () => {
    const store = filled();
    expect(names(store.list({ labelSelector: 'app=web' }))).toEqual(['a/web-1', 'a/web-2', 'b/web-1']);
    expect(names(store.list({ labelSelector: { app: 'web', tier: 'front' } }))).toEqual([
      'a/web-1',
      'a/web-2',
    ]);
    expect(
      names(store.list({ labelSelector: { matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] } })),
    ).toEqual(['a/db', 'b/pending', 'b/web-1']);
    expect(names(store.list({ namespace: 'a', labelSelector: 'app in (db,cache)' }))).toEqual(['a/db']);
    expect(names(store.namespace('b').list({ labelSelector: '!app' }))).toEqual(['b/pending']);
  });

  it('lists by field selector: name, namespace and indexed fields', () => {
    const store = filled();
    store.addFieldIndex('spec.nodeName', (p) => p.spec?.nodeName);
    expect(names(store.list({ fieldSelector: 'metadata.name=web-1' }))).toEqual(['a/web-1', 'b/web-1']);
    expect(names(store.list({ fieldSelector: { 'metadata.namespace': 'b' } }))).toEqual([
      'b/pending',
      'b/web-1',
    ]);
    expect(names(store.list({ fieldSelector: 'spec.nodeName=n2' }))).toEqual(['a/web-2', 'b/web-1']);
    expect(names(store.list({ fieldSelector: 'spec.nodeName=n2,metadata.namespace=a' }))).toEqual([
      'a/web-2',
    ]);
    expect(names(store.list({ namespace: 'b', fieldSelector: 'spec.nodeName!=n2' }))).toEqual(['b/pending']);
    // Absent fields equal the empty string, as on the server.
    expect(names(store.list({ fieldSelector: 'spec.nodeName=' }))).toEqual(['b/pending']);
    expect(names(store.list({ fieldSelector: 'metadata.namespace=a', namespace: 'b' }))).toEqual([]);
    expect(() => store.list({ fieldSelector: 'status.phase=Running' })).toThrow(/needs a field index/);
  });

  it('freezes what it stores, deeply', () => {
    const store = new Store<Pod>();
    const p = pod('a', 'x', 'n1', { app: 'web' });
    p.spec!.volumes = [{ name: 'v' }];
    const stored = store.set('a/x', p);
    expect(Object.isFrozen(stored)).toBe(true);
    expect(Object.isFrozen(stored.metadata?.labels)).toBe(true);
    expect(Object.isFrozen(stored.spec?.volumes?.[0])).toBe(true);
    expect(() => {
      stored.spec!.volumes!.push({ name: 'w' });
    }).toThrow(TypeError);
    const unfrozen = new Store<Pod>({ freeze: false });
    expect(Object.isFrozen(unfrozen.set('a/y', pod('a', 'y')))).toBe(false);
  });
});

describe('transforms', () => {
  it('strips managedFields without touching the rest', () => {
    const expected = { metadata: { name: 'x', uid: 'u', labels: { a: 'b' } }, data: { k: 'v' } };
    // Where a real API server puts them (last), in the middle, and in a frozen object.
    const last = {
      metadata: { name: 'x', uid: 'u', labels: { a: 'b' }, managedFields: [{ manager: 'm' }] },
      data: { k: 'v' },
    };
    const middle = {
      metadata: { name: 'x', uid: 'u', managedFields: [{ manager: 'm' }], labels: { a: 'b' } },
      data: { k: 'v' },
    };
    for (const obj of [
      last,
      middle,
      deepFreeze(structuredClone(middle)),
      deepFreeze(structuredClone(last)),
    ]) {
      const out = stripManagedFields(obj as KubeObject);
      expect(out).toEqual(expected);
      expect(Object.keys(out.metadata ?? {})).toEqual(['name', 'uid', 'labels']);
    }
    const clean = { metadata: { name: 'y' } };
    expect(stripManagedFields(clean)).toBe(clean);
  });

  it('turns whole objects into PartialObjectMetadata', () => {
    const meta = toPartialObjectMetadata({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } });
    expect(meta).toEqual({
      apiVersion: 'meta.k8s.io/v1',
      kind: 'PartialObjectMetadata',
      metadata: { name: 'p' },
    });
    expect(toPartialObjectMetadata(meta)).toBe(meta);
  });

  it('deepFreeze walks arrays and nested objects, once', () => {
    const shared = { deep: [1, { x: 1 }] };
    const a = deepFreeze({ shared, other: [shared] });
    expect(Object.isFrozen(a.shared.deep[1])).toBe(true);
    expect(deepFreeze(a)).toBe(a);
    expect(deepFreeze(null)).toBeNull();
  });
});
