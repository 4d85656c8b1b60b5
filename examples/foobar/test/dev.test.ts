/**
 * `kubeloop dev` on this example, as its README starts it: the local control plane, the CRDs,
 * the operator under the ServiceAccount and RBAC of config/rbac, its conversion webhook served
 * with a local CA and registered in FooBar's CRD (no certificate step), the samples applied —
 * the v1 one stored at v2 — and read back at v1 with kubectl. It runs on a copy of the project
 * (in the example's ignored `.kubeloop/`), because `dev` regenerates `config/` and the other
 * tests read it.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
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

describe('kubeloop dev examples/foobar', () => {
  it('serves the conversion with no certificate step: the v1 sample is Ready, stored at v2, read at v1', async () => {
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

    await waitFor(/\[FooBar\] default\/foobar-sample .*"type":"Ready","status":"True"/);
    expect(output).toContain('registered the conversion of foobars.test.example.com');
    expect(output).toContain(
      'running the operator as system:serviceaccount:foobar-system:foobar-controller-manager',
    );
    const kubectl = (...args: string[]) =>
      execFileSync('kubectl', ['--kubeconfig', kubeconfig, ...args]).toString();
    expect(kubectl('get', 'crd', 'foobars.test.example.com', '-o', 'jsonpath={.status.storedVersions}')).toBe(
      '["v2"]',
    );
    // The v2 sample, read at v1 through the operator's /convert.
    await waitFor(/\[FooBar\] default\/foobar-v2-sample /);
    expect(
      kubectl(
        'get',
        'foobars.v1.test.example.com',
        'foobar-v2-sample',
        '-o',
        'jsonpath={.spec.target} {.spec.type}',
      ),
    ).toBe('api.example.com tcp');
    expect(output).not.toContain('forbidden');
  });
});
