/**
 * `bearerToken` reads the usual `Bearer <token>` without trimming or splitting: these headers sit
 * at the edges of that shortcut, and each must read as k8s.io/apiserver's authenticator reads it.
 */
import { describe, expect, it } from 'vitest';
import { bearerToken } from './bearer.js';

describe('bearerToken', () => {
  it.each([
    ['Bearer abc', { token: 'abc' }],
    ['Bearer a', { token: 'a' }],
    ['bearer abc', { token: 'abc' }],
    ['  Bearer abc  ', { token: 'abc' }],
    ['Bearer abc\t', { token: 'abc' }],
    ['Bearer abc\u00a0', { token: 'abc' }],
    ['Bearer abc\u00e9', { token: 'abc\u00e9' }],
    ['Bearer abc def', { token: 'abc' }],
    ['Bearer abc  def', { token: 'abc' }],
    ['Bearer \u00e9abc', { token: '\u00e9abc' }],
    ['Bearer \tabc', { token: '\tabc' }],
    ['Bearer  abc', { spaceBeforeToken: true }],
    ['Bearer ', {}],
    ['Bearer', {}],
    ['Bearer\tabc', {}],
    ['Basic abc', {}],
    ['', {}],
    [undefined, {}],
  ])('%j reads as %j', (header, expected) => {
    expect(bearerToken(header)).toEqual(expected);
  });
});
