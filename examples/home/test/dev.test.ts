/**
 * `kubeloop dev` on this example, as its README starts it: the local control plane, the CRD,
 * the operator under the ServiceAccount and RBAC of config/rbac, its defaulter and validator
 * served with a local CA and registered (no certificate step), the sample applied — defaulted
 * on its way in — and a refusal as kubectl prints it. It runs on a copy of the project (in the
 * example's ignored `.kubeloop/`), because `dev` regenerates `config/` and the other tests read it.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { root } from './env.js';

const repo = join(root, '../..');
mkdirSync(join(root, '.kubeloop'), { recursive: true });
const project = mkdtempSync(join(root, '.kubeloop/dev-test-'));
for (const f of ['PROJECT', 'package.json', 'src', 'config'])
  cpSync(join(root, f), join(project, f), { recursive: true });
// The copy sits deeper than the example: its tsconfig names the repository's files absolutely.
writeFileSync(
  join(project, 'tsconfig.json'),
  JSON.stringify({
    extends: join(repo, 'tsconfig.base.json'),
    compilerOptions: { rootDir: 'src', outDir: 'dist', tsBuildInfoFile: 'dist/.tsbuildinfo' },
    include: ['src/**/*.ts'],
    references: [{ path: join(repo, 'packages/kubeloop') }],
  }),
);
const kubeconfig = join(project, '.kubeloop/kubeconfig');

let dev: ChildProcess | undefined;
afterAll(async () => {
  if (dev && dev.exitCode === null) {
    const exited = new Promise((resolve) => dev?.once('exit', resolve));
    dev.kill('SIGINT');
    await exited;
  }
  rmSync(project, { recursive: true, force: true });
});

describe('kubeloop dev examples/home', () => {
  it('serves the webhooks with no certificate step: the sample defaulted and reconciled, a duplicate room refused', async () => {
    dev = spawn(
      process.execPath,
      [
        join(repo, 'packages/cli/bin/kubeloop.js'),
        'dev',
        project,
        '--port=0',
        `--kubeconfig=${kubeconfig}`,
        '--metrics-bind-address=127.0.0.1:0',
        '--health-probe-bind-address=127.0.0.1:0',
        '--no-watch',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CI: 'true' } },
    );
    let output = '';
    const waiters: (() => void)[] = [];
    const onData = (d: Buffer) => {
      output += d.toString();
      for (const w of waiters.splice(0)) w();
    };
    dev.stdout?.on('data', onData);
    dev.stderr?.on('data', onData);
    const waitFor = (re: RegExp) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (re.test(output)) resolve();
          else if (dev?.exitCode !== null) reject(new Error(`kubeloop dev exited:\n${output}`));
          else waiters.push(check);
        };
        dev?.once('exit', check);
        check();
      });

    // Defaulted on its way in (floors, an owner), then reconciled (its rooms counted).
    await waitFor(/\[Home\] default\/home-sample .*spec\.floors=2 .*status\.rooms=3/);
    expect(output).toContain(
      'running the operator as system:serviceaccount:home-system:home-controller-manager',
    );
    const kubectl = (args: string[], input?: string) =>
      spawnSync('kubectl', ['--kubeconfig', kubeconfig, ...args], { input, encoding: 'utf8' });
    expect(kubectl(['get', 'configmap', 'home-sample-rooms', '-o', 'jsonpath={.data.kitchen}']).stdout).toBe(
      'floor=0 area=12',
    );
    const dup = kubectl(
      ['apply', '-f', '-'],
      'apiVersion: ajd.my.domain/v1\nkind: Home\nmetadata:\n  name: dup\nspec:\n  rooms: [{name: a, area: 1}, {name: a, area: 1}]\n',
    );
    expect(dup.status).toBe(1);
    expect(dup.stderr).toContain('spec.rooms[1].name: Duplicate value: "a"');
    expect(output).not.toContain('forbidden');
  });
});
