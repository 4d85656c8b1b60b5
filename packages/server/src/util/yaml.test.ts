import { describe, expect, it } from 'vitest';
import { parseYamlBounded, YamlLimitError } from './yaml.js';

const opts = { uniqueKeys: false, maxAliasCount: 100 };
const limitError = (text: string, max?: number) => {
  try {
    parseYamlBounded(text, opts, max);
  } catch (err) {
    if (err instanceof YamlLimitError) return err.message;
    throw err;
  }
  return undefined;
};
/** Text whose collections nest exactly `n` deep, in several styles. */
const styles: Record<string, (n: number) => string> = {
  flowMap: (n) => `${'{"a": '.repeat(n - 1)}{}${'}'.repeat(n - 1)}`,
  flowSeq: (n) => `${'['.repeat(n)}${']'.repeat(n)}`,
  blockMap: (n) => `${Array.from({ length: n }, (_, i) => `${' '.repeat(i)}a:`).join('\n')} 1`,
  dashes: (n) => `${'- '.repeat(n)}1`,
  mapOfSeq: (n) =>
    Array.from({ length: n }, (_, i) => (i % 2 === 0 ? `${' '.repeat(i)}a:` : `${' '.repeat(i - 1)}- `)).join(
      '\n',
    ) + ' x',
  mixed: (n) => `a:\n  - b: ${'['.repeat(n - 3)}1${']'.repeat(n - 3)}`,
};

describe('parseYamlBounded', () => {
  it.each(Object.keys(styles))('%s: accepted at the limit, refused past it', (style) => {
    const make = styles[style]!;
    expect(limitError(make(60), 60)).toBeUndefined();
    expect(limitError(make(61), 60)).toBe('yaml: exceeded max depth of 60');
  });

  it('counts block collections as they are, not by indentation alone', () => {
    const doc = [
      'a: b',
      'c:',
      '- d: [1, {x: y}]',
      '  e: "q[{[{"',
      '- f: g[[[[',
      'h: |',
      '  lit',
      '      deeper',
      '         and deeper',
      'i:',
      '  j:',
      '    k: 1',
    ].join('\n');
    // The deepest: the root map → c's list → its item → d's list → {x}: 5.
    expect(limitError(doc, 5)).toBeUndefined();
    expect(limitError(doc, 4)).toBe('yaml: exceeded max depth of 4');
    expect(parseYamlBounded(doc, opts)).toMatchObject({
      c: [{ e: 'q[{[{' }, { f: 'g[[[[' }],
      h: 'lit\n    deeper\n       and deeper\n',
    });
  });

  it.each([1_000, 10_000, 100_000, 1_000_000])('%s levels are refused quickly', (n) => {
    expect(limitError(styles.flowSeq!(n))).toMatch(/exceeded max depth/);
    expect(limitError(styles.dashes!(n))).toMatch(/exceeded max depth/);
  });

  it('refuses an anchor whose value holds itself', () => {
    expect(limitError('a: &x [*x]')).toBe("yaml: anchor 'x' value contains itself");
    expect(limitError('a: &me\n  b: *me\n')).toBe("yaml: anchor 'me' value contains itself");
  });

  it('refuses alias bombs', () => {
    let text = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n';
    const names = 'abcdefghi';
    for (let i = 1; i < 9; i++)
      text += `${names[i]}: &${names[i]} [${Array(9)
        .fill(`*${names[i - 1]}`)
        .join(',')}]\n`;
    expect(limitError(text)).toBe('yaml: document contains excessive aliasing');
  });

  it('keeps ordinary aliases', () => {
    expect(parseYamlBounded('a: &x [1]\nb: *x\n', opts)).toEqual({ a: [1], b: [1] });
  });
});
