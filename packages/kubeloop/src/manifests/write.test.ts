/**
 * `writeGeneratedFiles`: `kubeloop generate` runs at every change under `kubeloop dev`, so it
 * must leave unchanged files untouched and replace changed ones whole (a temporary file renamed
 * over the old one), never truncate-then-write a file another process may be reading.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeGeneratedFiles } from './project.js';

const root = mkdtempSync(join(tmpdir(), 'kubeloop-write-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('writeGeneratedFiles', () => {
  it('writes new and changed files only, each replaced whole by a rename, leaving no temporary file', async () => {
    const first = await writeGeneratedFiles(root, [
      { path: 'config/a.yaml', content: 'a: 1\n' },
      { path: 'config/b.yaml', content: 'b: 1\n' },
    ]);
    expect(first).toEqual(['config/a.yaml', 'config/b.yaml']);
    const a = statSync(join(root, 'config/a.yaml'), { bigint: true });
    const b = statSync(join(root, 'config/b.yaml'), { bigint: true });

    const second = await writeGeneratedFiles(root, [
      { path: 'config/a.yaml', content: 'a: 1\n' },
      { path: 'config/b.yaml', content: 'b: 2\n' },
    ]);
    expect(second).toEqual(['config/b.yaml']);
    const a2 = statSync(join(root, 'config/a.yaml'), { bigint: true });
    expect([a2.ino, a2.mtimeNs]).toEqual([a.ino, a.mtimeNs]);
    const b2 = statSync(join(root, 'config/b.yaml'), { bigint: true });
    // Renamed over: a reader holding the old b.yaml open keeps reading the old file whole.
    expect(b2.ino).not.toBe(b.ino);
    expect(readFileSync(join(root, 'config/b.yaml'), 'utf8')).toBe('b: 2\n');
    expect(readdirSync(join(root, 'config')).sort()).toEqual(['a.yaml', 'b.yaml']);
  });
});
