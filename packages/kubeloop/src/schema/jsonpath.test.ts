import { describe, expect, test } from 'vitest';
import { columnCell, evaluateJsonPath, humanDuration } from './jsonpath.js';

const obj = {
  metadata: {
    name: 'a',
    labels: { app: 'web', 'app.kubernetes.io/name': 'x' },
    creationTimestamp: '2024-01-01T00:00:00Z',
  },
  spec: { replicas: 3, ratio: 0.5, items: [{ name: 'i0' }, { name: 'i1' }], on: true },
  status: {
    conditions: [
      { type: 'Ready', status: 'True' },
      { type: 'Synced', status: 'False' },
    ],
  },
};

describe('evaluateJsonPath', () => {
  test.each<[string, unknown[]]>([
    ['.spec.replicas', [3]],
    ['.metadata.labels.app', ['web']],
    [".metadata.labels['app.kubernetes.io/name']", ['x']],
    ['.spec.items[1].name', ['i1']],
    ['.spec.items[*].name', ['i0', 'i1']],
    ['.spec.items[-1].name', ['i1']],
    ['.status.conditions[?(@.type=="Ready")].status', ['True']],
    ['{.spec.replicas}', [3]],
    ['.spec.missing', []],
  ])('%s', (path, expected) => {
    expect(evaluateJsonPath(obj, path)).toEqual(expected);
  });
});

describe('columnCell', () => {
  const now = Date.parse('2024-01-01T00:05:00Z');
  test.each<[string, string, unknown]>([
    ['integer', '.spec.replicas', 3],
    ['integer', '.spec.ratio', 0],
    ['number', '.spec.ratio', 0.5],
    ['boolean', '.spec.on', true],
    ['string', '.spec.replicas', '3'],
    ['string', '.spec.items[0]', '{"name":"i0"}'],
    ['string', '.status.conditions[?(@.type=="Ready")].status', 'True'],
    ['date', '.metadata.creationTimestamp', '5m'],
    ['integer', '.spec.missing', null],
    ['boolean', '.spec.replicas', null],
  ])('%s %s', (type, jsonPath, expected) => {
    expect(columnCell(obj, { type, jsonPath }, now)).toEqual(expected);
  });
});

test.each<[number, string]>([
  [5_000, '5s'],
  [150_000, '2m30s'],
  [600_000, '10m'],
  [3 * 3600_000 + 60_000, '3h1m'],
  [30 * 3600_000, '30h'],
  [3 * 86400_000 + 4 * 3600_000, '3d4h'],
  [400 * 86400_000, '400d'],
  [-5_000, '<invalid>'],
])('humanDuration(%d) = %s', (ms, text) => {
  expect(humanDuration(ms)).toBe(text);
});
