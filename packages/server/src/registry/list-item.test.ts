import { describe, expect, it } from 'vitest';
import type { StoredObject } from '../storage/types.js';
import { listItemJson } from './list-item.js';
import type { ResourceType } from './types.js';

const builtin = { custom: undefined } as unknown as ResourceType;
const custom = { custom: {} } as unknown as ResourceType;
const stored = (object: Record<string, unknown>): StoredObject => ({
  key: '/k',
  object,
  revision: 1,
  json: JSON.stringify(object),
});

describe('listItemJson', () => {
  it('drops the type meta of a built-in item wherever it stands, and keeps everything else', () => {
    for (const o of [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { kind: 'x' } },
      { kind: 'ConfigMap', apiVersion: 'v1', metadata: { name: 'a' }, data: { kind: 'x' } },
      { metadata: { name: 'a' }, apiVersion: 'v1', data: { kind: 'x' }, kind: 'ConfigMap' },
      { apiVersion: 'v1', metadata: { name: 'a' }, data: { kind: 'x' } },
      { apiVersion: 'v\\"1', kind: 'ConfigMap', metadata: { name: 'a' }, data: { kind: 'x' } },
    ]) {
      expect(JSON.parse(listItemJson(builtin, stored(o)))).toEqual({
        metadata: { name: 'a' },
        data: { kind: 'x' },
      });
    }
  });

  it('keeps a custom resource as it is', () => {
    const s = stored({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'a' } });
    expect(listItemJson(custom, s)).toBe(s.json);
  });
});
