/**
 * The whole kubebuilder-like workflow for a project OUTSIDE this repository, as a new user runs
 * it: the packages packed as npm tarballs (`npm run pack`), `kubeloop init --kubeloop <tarballs>`
 * in a temporary folder, `npm install`, `create api` twice (namespaced and cluster-scoped),
 * `create webhook --defaulting --programmatic-validation`, `generate`, `npm run build`, the
 * project's own `npm test`, and `kubeloop dev` reconciling its samples with the webhooks
 * registered (a Shop without a field gets it from the defaulter; the validator refuses one),
 * checked with kubectl. It prints how long each step took, and the time from `init` to
 * the reconciled sample.
 *
 * The install: kubeloop's three packages come from the tarballs; everything else (TypeScript,
 * @types/node, kubeloop's own dependencies) from the npm registry, through npm's cache first
 * (`--prefer-offline`: the repository's `npm ci` filled it with the same versions).
 * `--ignore-scripts` skips better-sqlite3's native build: its prebuilt binary comes from GitHub,
 * out of reach here, and building it takes over a minute on two cores; only `kubeloop server
 * --data-dir` loads it. A user's plain `npm install` gets the prebuilt binary.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnKubeloop } from './standalone-support.js';
import { bin, kubectl, root } from './support.js';

const work = realpathSync(mkdtempSync(join(tmpdir(), 'kubeloop-standalone-')));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Runs a command to its end; throws with its output when it fails. */
function run(cmd: string, args: readonly string[], cwd: string): string {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', env: { ...process.env, CI: 'true' } });
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

describe('a project outside the repository, from the packed tarballs', () => {
  it('init → install → create api ×2 → create webhook → generate → build → npm test → kubeloop dev reconciles the samples, through the webhooks', async () => {
    expect(relative(root, work).startsWith('..')).toBe(true);
    const times: Array<[string, number]> = [];
    let last = performance.now();
    const step = (name: string) => {
      const now = performance.now();
      times.push([name, Math.round(now - last)]);
      // As it goes: a run that times out shows how far it got.
      process.stdout.write(`standalone: ${name} (${((now - last) / 1000).toFixed(1)} s)\n`);
      last = now;
    };

    const tarballs = join(work, 'tarballs');
    execFileSync(process.execPath, [join(root, 'scripts/pack.mjs'), '--out', tarballs], {
      cwd: root,
      stdio: 'pipe',
    });
    step('npm run pack');

    const start = performance.now();
    last = start;
    run(
      process.execPath,
      [bin, 'init', 'shop-operator', '--domain', 'example.com', '--kubeloop', tarballs, '--no-install'],
      work,
    );
    step('kubeloop init');
    const project = join(work, 'shop-operator');
    run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'], project);
    step('npm install (tarballs + registry)');
    // From here on, the project's own kubeloop: the one the tarball installed.
    const kubeloop = join(project, 'node_modules/.bin/kubeloop');
    expect(realpathSync(kubeloop).startsWith(join(project, 'node_modules/@kubeloop/cli'))).toBe(true);
    run(kubeloop, ['create', 'api', '--group', 'web', '--version', 'v1', '--kind', 'Shop'], project);
    run(
      kubeloop,
      [
        'create',
        'api',
        '--group',
        'infra',
        '--version',
        'v1alpha1',
        '--kind',
        'Region',
        '--namespaced=false',
      ],
      project,
    );
    step('kubeloop create api ×2');
    run(
      kubeloop,
      [
        'create',
        'webhook',
        '--group',
        'web',
        '--version',
        'v1',
        '--kind',
        'Shop',
        '--defaulting',
        '--programmatic-validation',
      ],
      project,
    );
    step('kubeloop create webhook');
    const generated = run(kubeloop, ['generate'], project);
    expect(generated).toContain('wrote config/crd/bases/web.example.com_shops.yaml');
    expect(generated).toContain('wrote config/crd/bases/infra.example.com_regions.yaml');
    expect(generated).toContain('wrote config/webhook/manifests.yaml');
    step('kubeloop generate');
    run('npm', ['run', 'build'], project);
    step('npm run build');
    const reconciledAt = await (async () => {
      const kubeconfig = join(project, '.kubeloop/kubeconfig');
      const dev = spawnKubeloop(
        kubeloop,
        [
          'dev',
          '--port=0',
          `--kubeconfig=${kubeconfig}`,
          '--metrics-bind-address=127.0.0.1:0',
          '--health-probe-bind-address=127.0.0.1:0',
        ],
        project,
      );
      try {
        await dev.waitFor(/\[Shop\] default\/shop-sample .*status\.observedGeneration=1/);
        await dev.waitFor(/\[Region\] region-sample .*status\.observedGeneration=1/);
        const at = performance.now();
        step('kubeloop dev: samples reconciled');
        await dev.waitFor(/registered .* served by the operator/);
        // The scaffolded defaulter sets spec.foo; the scaffolded validator refuses foo=forbidden.
        const plain = (name: string, spec: object) =>
          JSON.stringify({
            apiVersion: 'web.example.com/v1',
            kind: 'Shop',
            metadata: { name, namespace: 'default' },
            spec,
          });
        expect(kubectl(kubeconfig, ['create', '-f', '-'], plain('shop-plain', {})).code).toBe(0);
        expect(
          kubectl(kubeconfig, ['get', 'shop', 'shop-plain', '-n', 'default', '-o', 'jsonpath={.spec.foo}'])
            .stdout,
        ).toBe('bar');
        const refused = kubectl(
          kubeconfig,
          ['create', '-f', '-'],
          plain('shop-forbidden', { foo: 'forbidden' }),
        );
        expect(refused.code).not.toBe(0);
        expect(refused.stderr).toContain('spec.foo: Invalid value: "forbidden"');
        await dev.waitFor(/\[Shop\] default\/shop-plain .*status\.observedGeneration=1/);
        step('kubeloop dev: through the webhooks');
        expect(
          kubectl(kubeconfig, [
            'get',
            'shop',
            'shop-sample',
            '-n',
            'default',
            '-o',
            'jsonpath={.status.observedGeneration}',
          ]).stdout,
        ).toBe('1');
        expect(
          kubectl(kubeconfig, [
            'get',
            'region',
            'region-sample',
            '-o',
            'jsonpath={.status.observedGeneration}',
          ]).stdout,
        ).toBe('1');
        return at;
      } finally {
        expect(await dev.stop()).toBe(0);
      }
    })();
    const test = run('npm', ['test'], project);
    // npm test regenerates first: nothing changed since, so nothing is written again.
    expect(test).not.toMatch(/^wrote /m);
    // The controllers' tests (2) and the Shop webhooks' (2), on vitest.
    // biome-ignore lint/suspicious/noControlCharactersInRegex: vitest's colours
    expect(test.replace(/\x1b\[[0-9;]*m/g, '')).toMatch(/Tests +4 passed \(4\)/);
    step('npm test (the project’s own)');

    const pkg = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8'));
    expect(pkg.dependencies.kubeloop).toBe(`file:${join(tarballs, 'kubeloop-0.1.0.tgz')}`);
    const lines = times.map(([name, ms]) => `  ${name.padEnd(36)} ${(ms / 1000).toFixed(1).padStart(6)} s`);
    process.stdout.write(
      `standalone project, step by step:\n${lines.join('\n')}\n  init → reconciled samples: ${((reconciledAt - start) / 1000).toFixed(1)} s (target < 60 s)\n`,
    );
  }, 420_000);
});
