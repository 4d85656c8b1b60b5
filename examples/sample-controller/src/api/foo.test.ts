import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

// A file of its own (vitest runs each in a fresh process): the test reads the module cache.
// kubeloop's entry is src/index.ts or dist/index.js: one level below its package root either way.
const bundle = fileURLToPath(new URL('../vendor/typebox.cjs', import.meta.resolve('kubeloop')));
const require = createRequire(bundle);

describe('Foo', () => {
  it('is declared without loading the TypeBox bundle', async () => {
    const { Foo } = await import('./foo.js');
    expect(Foo.kind).toBe('Foo');
    expect(Object.keys(require.cache)).not.toContain(bundle);
  });

  it("gives the CRD main's TypeBox builders gave, byte for byte", async () => {
    const { Foo } = await import('./foo.js');
    // foo-crd.generated.json: JSON.stringify(Foo.crd(), null, 2) of main's build before the fast builders.
    const expected = readFileSync(new URL('./foo-crd.generated.json', import.meta.url), 'utf8');
    expect(JSON.stringify(Foo.crd(), null, 2)).toBe(expected);
  });
});
