/**
 * The `kubeloop` command as npm installs it. npm links a package's bins at install time, before
 * a workspace's build: a bin that only exists after `npm run build` is not linked on a fresh
 * clone, and `npx kubeloop` fails there ("could not determine executable to run").
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const cli = join(root, 'packages/cli');

describe('the kubeloop bin', () => {
  const pkg = JSON.parse(readFileSync(join(cli, 'package.json'), 'utf8')) as {
    bin: Record<string, string>;
    files: string[];
  };

  it('is a committed, executable file, so that npm links it on a fresh clone', () => {
    const target = pkg.bin.kubeloop;
    expect(target).toBeDefined();
    const tracked = execFileSync('git', ['ls-files', '--error-unmatch', target ?? ''], {
      cwd: cli,
      encoding: 'utf8',
    });
    expect(tracked.trim()).toBe((target ?? '').replace(/^\.\//, ''));
    expect(statSync(join(cli, target ?? '')).mode & 0o111).not.toBe(0);
    // …and it is in the published package.
    expect(pkg.files.some((f) => (target ?? '').replace(/^\.\//, '').startsWith(f))).toBe(true);
  });

  it('runs the built command (what `npx kubeloop` runs once `npm run build` is done)', () => {
    const r = spawnSync(process.execPath, [join(cli, pkg.bin.kubeloop ?? ''), '--version'], {
      encoding: 'utf8',
    });
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe('0.1.0');
  });
});
