import { describe, expect, it } from 'vitest';
import { warningHeader, warningHeaders } from './warnings.js';

const decoded = (h: string | undefined) => (h === undefined ? h : Buffer.from(h, 'latin1').toString('utf8'));

describe('warningHeader', () => {
  it('quotes the text, escaping only quotes and backslashes', () => {
    expect(decoded(warningHeader('a "b" \\ é 規 🚀'))).toBe('299 - "a \\"b\\" \\\\ é 規 🚀"');
  });
  it('is Latin-1 characters holding UTF-8 bytes, which Node can always send', () => {
    expect(warningHeader('é')).toBe('299 - "\u00c3\u00a9"');
  });
  it('drops texts with control characters, as NewWarningHeader refuses them', () => {
    expect(warningHeader('a\nb')).toBeUndefined();
    expect(warningHeader('a\u0085b')).toBeUndefined();
    expect(warningHeader('')).toBeUndefined();
  });
});

describe('warningHeaders', () => {
  it('deduplicates', () => {
    expect(warningHeaders(['a', 'b', 'a'])).toEqual(['299 - "a"', '299 - "b"']);
  });
  it('cuts every warning to 256 characters once they pass 4,096, and drops those past the limit', () => {
    const long = (c: string) => c.repeat(1000);
    const out = warningHeaders(['a', long('b'), long('c'), long('d'), long('e'), long('f'), 'g']);
    // 1 + 4×1000 fit; the fifth long one starts truncation: all replayed at ≤256 (1+5×256=1281).
    expect(out.map((h) => h.length - '299 - ""'.length)).toEqual([1, 256, 256, 256, 256, 256, 1]);
  });
});
