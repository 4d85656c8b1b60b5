/**
 * The repository's Markdown stands alone: every relative link of a tracked `.md` file leads to a
 * file of the repository. A link outside it (`../shared/…`) is dead in a clone and on GitHub.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));

describe('Markdown links', () => {
  it('every relative link of a tracked .md file resolves to a file inside the repository', () => {
    const files = execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard', '*.md'], {
      cwd: root,
      encoding: 'utf8',
    })
      .split('\n')
      .filter((f) => f !== '' && existsSync(join(root, f)));
    expect(files).toContain('README.md');
    const broken: string[] = [];
    for (const file of files) {
      const text = readFileSync(join(root, file), 'utf8').replace(/```[\s\S]*?```/g, '');
      for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = (m[1] ?? '').split('#')[0] ?? '';
        if (target === '' || /^[a-z]+:/i.test(target)) continue;
        const path = resolve(dirname(join(root, file)), target);
        const rel = relative(root, path);
        if (rel.startsWith('..') || !existsSync(path)) broken.push(`${file}: ${m[1]}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
