import { describe, expect, it } from 'vitest';
import {
  addQuantity,
  canonicalQuantity,
  compareQuantity,
  formatMilli,
  isBinary,
  milli,
  parseQuantity,
} from './quantity.js';

const q = (s: string) => parseQuantity(s)!;

describe('resource.Quantity', () => {
  it('compares and adds exactly across suffixes', () => {
    expect(compareQuantity(q('500m'), q('0.5'))).toBe(0);
    expect(compareQuantity(q('1Gi'), q('1G'))).toBe(1);
    expect(compareQuantity(q('1e3'), q('1k'))).toBe(0);
    expect(compareQuantity(addQuantity(q('1Mi'), q('1Mi')), q('2Mi'))).toBe(0);
    expect(parseQuantity('1Xi')).toBeUndefined();
    expect(parseQuantity('abc')).toBeUndefined();
  });

  it('reads milli-units rounded up, and prints them back canonically', () => {
    expect(milli('250m')).toBe(250);
    expect(milli('1Ki')).toBe(1_024_000);
    expect(milli('0.1')).toBe(100);
    expect(milli(2)).toBe(2000);
    expect(milli('x')).toBeUndefined();
    expect(formatMilli(250)).toBe('250m');
    expect(formatMilli(2_000_000)).toBe('2k');
    expect(formatMilli(milli('192Mi')!, isBinary('192Mi'))).toBe('192Mi');
  });

  it('decodes to the text a Go round trip gives', () => {
    expect(canonicalQuantity('0.5')).toBe('500m');
    expect(canonicalQuantity('1024Mi')).toBe('1Gi');
  });
});
