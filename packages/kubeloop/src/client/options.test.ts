import { describe, expect, it } from 'vitest';
import { parseFieldSelector } from '../api/fields.js';
import { parseLabelSelector } from '../api/labels.js';
import { deleteBody, fieldSelectorString, labelSelectorString, query, selectorParams } from './options.js';

describe('selectors', () => {
  it('accepts label selectors as strings, maps, API objects and parsed selectors', () => {
    expect(labelSelectorString('app=web')).toBe('app=web');
    expect(labelSelectorString({ tier: 'front', app: 'web' })).toBe('app=web,tier=front');
    expect(
      labelSelectorString({
        matchLabels: { app: 'web' },
        matchExpressions: [{ key: 'env', operator: 'In', values: ['prod', 'dev'] }],
      }),
    ).toBe('app=web,env in (dev,prod)');
    expect(labelSelectorString(parseLabelSelector('!canary,x notin (a)'))).toBe('!canary,x notin (a)');
  });

  it('accepts field selectors as strings, maps and parsed selectors', () => {
    expect(fieldSelectorString({ 'metadata.name': 'a' })).toBe('metadata.name=a');
    expect(fieldSelectorString(parseFieldSelector('status.phase!=Running'))).toBe('status.phase!=Running');
    expect(selectorParams({ labelSelector: {}, fieldSelector: '' })).toEqual({
      labelSelector: undefined,
      fieldSelector: undefined,
    });
  });

  it('builds queries and DeleteOptions bodies', () => {
    expect(query({ a: 1, b: undefined, c: true, d: 'x y' })).toBe('?a=1&c=true&d=x+y');
    expect(query({})).toBe('');
    expect(deleteBody({})).toBeUndefined();
    expect(
      JSON.parse(
        deleteBody({ propagationPolicy: 'Foreground', gracePeriodSeconds: 0, preconditions: { uid: 'u' } })!,
      ),
    ).toEqual({
      kind: 'DeleteOptions',
      apiVersion: 'v1',
      propagationPolicy: 'Foreground',
      gracePeriodSeconds: 0,
      preconditions: { uid: 'u' },
    });
  });
});
