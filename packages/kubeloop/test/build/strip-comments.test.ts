import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a build script in plain JavaScript, without declarations.
import { stripComments } from '../../../../scripts/strip-comments.mjs';

const strip = (text: string): string => stripComments(ts, text);

/** Every token of `text` with its line and column (what a source map points at). */
function tokens(text: string): string[] {
  const sf = ts.createSourceFile('x.js', text, ts.ScriptTarget.Latest, true, ts.ScriptKind.JS);
  const out: string[] = [];
  const visit = (node: ts.Node) => {
    // TSDoc, which the parser attaches to declarations, is comment, not code.
    if (node.kind >= ts.SyntaxKind.FirstJSDocNode && node.kind <= ts.SyntaxKind.LastJSDocNode) return;
    if (node.getChildCount(sf) === 0 && node.kind !== ts.SyntaxKind.EndOfFileToken) {
      const { line, character } = sf.getLineAndCharacterOfPosition(node.getStart(sf));
      out.push(`${line}:${character} ${node.getText(sf)}`);
    }
    for (const c of node.getChildren(sf)) visit(c);
  };
  visit(sf);
  return out;
}

describe('strip-comments (the build step that drops comments from dist/*.js)', () => {
  it('drops comments on their own lines and at line ends, keeps the rest where it was', () => {
    const src = [
      '#!/usr/bin/env node',
      '/**',
      ' * TSDoc of f.',
      ' */',
      'export function f(a /* inline: kept */, b) {',
      '  // why',
      "  const s = '// not a comment', t = `/* nor this */`, r = /\\/\\/x/g; // trailing",
      '  return a + b; /* trailing block */',
      '  /* before the brace */',
      '}',
      '/*! licence: kept */',
      '//# sourceMappingURL=x.js.map',
    ].join('\n');
    const out = strip(src);
    expect(out.split('\n')).toEqual([
      '#!/usr/bin/env node',
      '',
      '',
      '',
      'export function f(a /* inline: kept */, b) {',
      '',
      "  const s = '// not a comment', t = `/* nor this */`, r = /\\/\\/x/g;",
      '  return a + b;',
      '',
      '}',
      '/*! licence: kept */',
      '//# sourceMappingURL=x.js.map',
    ]);
    expect(tokens(out)).toEqual(tokens(src));
  });

  it('keeps every token of an emitted module at its line and column, so source maps stay exact', () => {
    for (const file of [
      '../../src/runtime/manager/manager.ts',
      '../../src/schema/crd/schema-validation.ts',
    ]) {
      const source = readFileSync(fileURLToPath(new URL(file, import.meta.url)), 'utf8');
      const js = ts.transpileModule(source, {
        compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
      }).outputText;
      const out = strip(js);
      expect(out.length).toBeLessThan(js.length);
      expect(out.split('\n').length).toBe(js.split('\n').length);
      expect(tokens(out)).toEqual(tokens(js));
    }
  });
});
