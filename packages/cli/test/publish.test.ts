/**
 * The three packages are publishable as they are: what `npm pack` puts in each tarball has every
 * file its `exports`, `types` and `bin` name, a README, and nothing from outside the package or
 * of the build's bookkeeping.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { root } from './support.js';

interface PackResult {
  name: string;
  files: Array<{ path: string }>;
}

/** Every file an `exports` map names (conditions and subpaths flattened). */
function targets(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (value && typeof value === 'object') return Object.values(value).flatMap(targets);
  return [];
}

describe.each(['packages/kubeloop', 'packages/server', 'packages/cli'])('%s', (dir) => {
  const pkg = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8'));
  it('packs every file its manifest names, a README, and no build bookkeeping', () => {
    const [packed] = JSON.parse(
      execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
        cwd: join(root, dir),
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      }),
    ) as PackResult[];
    const files = new Set(packed?.files.map((f) => f.path));
    expect(files.has('README.md')).toBe(true);
    const named = [pkg.main, pkg.types, ...targets(pkg.exports), ...targets(pkg.bin ?? {})].map((p: string) =>
      p.replace(/^\.\//, ''),
    );
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter((p) => !files.has(p))).toEqual([]);
    expect([...files].filter((f) => f.startsWith('..') || /tsbuildinfo|\.test\.(ts|js)$/.test(f))).toEqual(
      [],
    );
    expect(pkg.private).toBeUndefined();
    expect(pkg.license).toBe('Apache-2.0');
  });

  it('depends on its sibling packages by their version, not by a path', () => {
    const deps: Record<string, string> = { ...pkg.dependencies };
    for (const [name, spec] of Object.entries(deps)) {
      if (name === 'kubeloop' || name.startsWith('@kubeloop/')) expect(spec).toMatch(/^\d+\.\d+\.\d+$/);
      expect(spec).not.toMatch(/^(file:|link:|\.)/);
    }
  });
});
