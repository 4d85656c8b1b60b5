/**
 * The HTTP layer is generic: what a kind does beyond the common verbs is a hook of its registry
 * entry (e.g. `createSubresources`), so the code of `http/` and `http/handlers/` names no kind.
 * The connect handlers of `http/streaming/` are the pods' own, registered by the composition root.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtinKinds } from '../registry/builtin-kinds.js';

const HERE = import.meta.dirname;
const sources = ['.', 'handlers'].flatMap((dir) =>
  readdirSync(join(HERE, dir))
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .map((f) => join(dir, f)),
);

/** The file's code without its comments (line and block), so that documentation may name kinds. */
function code(file: string): string {
  return readFileSync(join(HERE, file), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

describe('the HTTP layer', () => {
  it('names no kind in its code', () => {
    const names = new Set(builtinKinds().flatMap((t) => [t.resource, t.kind]));
    // The URL grammar's `namespaces` segment (`/api/v1/namespaces/<ns>/...`) is no kind's.
    names.delete('namespaces');
    const found: string[] = [];
    for (const file of sources) {
      for (const m of code(file).matchAll(/['"`]([A-Za-z]+)['"`/]/g)) {
        if (names.has(m[1]!)) found.push(`${file}: ${m[1]}`);
      }
    }
    expect(found).toEqual([]);
  });

  it('keeps each file under 600 lines', () => {
    const long = sources.filter((f) => readFileSync(join(HERE, f), 'utf8').split('\n').length > 600);
    expect(long).toEqual([]);
  });
});
