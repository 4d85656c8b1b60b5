import v8 from 'node:v8';
import { describe, expect, it } from 'vitest';
import { capYoungGeneration } from './young-generation.js';

const youngMb = () =>
  (v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0) / 2 ** 20;

describe('capYoungGeneration', () => {
  it('keeps the young generation from growing once it reached the cap', async () => {
    const before = youngMb();
    const stop = capYoungGeneration(4);
    try {
      // Survivors of many scavenges: what makes V8 double the young generation (to 32 MB).
      const keep: unknown[] = [];
      for (let r = 0; r < 150; r++) {
        const batch = Array.from({ length: 20_000 }, (_, i) => ({ i, s: `x${i}`, o: { k: i } }));
        keep.push(batch.slice(0, 300));
        await new Promise((resolve) => setImmediate(resolve));
      }
      expect(keep).toHaveLength(150);
      // At most one doubling past the cap (GC notifications come after the collection).
      expect(youngMb()).toBeLessThanOrEqual(Math.max(before, 8));
    } finally {
      stop();
    }
  });
});

describe('kubeloop/young-generation', () => {
  it('is a subpath that loads nothing but node builtins, so an entry point can cap before its graph loads', async () => {
    const { readFile } = await import('node:fs/promises');
    const pkg = JSON.parse(await readFile(new URL('../../../package.json', import.meta.url), 'utf8'));
    expect(pkg.exports['./young-generation'].source).toBe('./src/runtime/manager/young-generation.ts');
    const source = await readFile(new URL('./young-generation.ts', import.meta.url), 'utf8');
    const imports = [...source.matchAll(/^import[^'"]*['"]([^'"]+)['"]/gm)].map((m) => m[1]);
    expect(imports.length).toBeGreaterThan(0);
    expect(imports.every((s) => s?.startsWith('node:'))).toBe(true);
  });
});
