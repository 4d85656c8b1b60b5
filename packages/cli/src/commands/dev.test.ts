import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { describeState } from './dev.js';
import { formatLogLine } from './project.js';

const root = fileURLToPath(new URL('../../../../', import.meta.url));

describe('kubeloop dev', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it("runs `npm start`'s command: the sample Foo gets reconciled by the operator under its own ServiceAccount, kubectl sees it, its webhooks answer with no certificate step, and Ctrl-C exits 0", async () => {
    // The command of the root `start` script, as the README tells users to run it (built by `npm test`).
    const start: string = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).scripts.start;
    const [cmd, ...args] = start.split(' ');
    expect(cmd).toBe('node');
    const dir = mkdtempSync(join(tmpdir(), 'kubeloop-dev-'));
    dirs.push(dir);
    const kubeconfig = join(dir, 'kubeconfig');
    const child = spawn(
      process.execPath,
      [
        ...args,
        '--port=0',
        `--kubeconfig=${kubeconfig}`,
        '--metrics-bind-address=127.0.0.1:0',
        '--health-probe-bind-address=127.0.0.1:0',
      ],
      { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let out = '';
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const reconciled = new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (/\[Foo\] default\/example-foo .*status\.availableReplicas=1/.test(out)) resolve();
      });
      child.stderr.on('data', (d: Buffer) => {
        out += d.toString();
      });
      exited.then((code) => reject(new Error(`kubeloop dev exited with ${code}:\n${out}`)));
    });
    reconciled.catch(() => undefined);
    try {
      await reconciled;
      expect(out).toContain(`export KUBECONFIG=${kubeconfig}`);
      const get = spawnSync(
        'kubectl',
        [
          '--kubeconfig',
          kubeconfig,
          'get',
          'foo',
          'example-foo',
          '-o',
          'jsonpath={.status.availableReplicas}',
        ],
        { encoding: 'utf8', env: { ...process.env, HOME: dir } },
      );
      expect(get.stdout).toBe('1');
      // The operator ran under the ServiceAccount of its config/rbac, not as the admin.
      const operator = 'system:serviceaccount:sample-controller-system:sample-controller-controller-manager';
      expect(out).toContain(`running the operator as ${operator}`);
      const whoami = spawnSync(
        'kubectl',
        [
          '--kubeconfig',
          join(dir, 'operator.kubeconfig'),
          'auth',
          'whoami',
          '-o',
          'jsonpath={.status.userInfo.username}',
        ],
        { encoding: 'utf8', env: { ...process.env, HOME: dir } },
      );
      expect(whoami.stdout).toBe(operator);

      // The sample's webhooks, served by the operator with the CA dev made and registered by dev.
      expect(out).toContain(
        'registered 2 admission webhook(s) and the conversion of foos.samplecontroller.k8s.io, served by the operator at https://127.0.0.1:',
      );
      const k = (args: string[], input?: string) =>
        spawnSync('kubectl', ['--kubeconfig', kubeconfig, ...args], {
          encoding: 'utf8',
          env: { ...process.env, HOME: dir },
          ...(input !== undefined && { input }),
        });
      const foo = (name: string, spec: Record<string, unknown>) =>
        JSON.stringify({
          apiVersion: 'samplecontroller.k8s.io/v1alpha1',
          kind: 'Foo',
          metadata: { name },
          spec,
        });
      // Defaulted: no replicas asked for, one given (the schema requires it).
      expect(k(['apply', '-f', '-'], foo('hooked', { deploymentName: 'hooked' })).stderr).toBe('');
      expect(
        k(['get', 'foos.v1alpha1.samplecontroller.k8s.io', 'hooked', '-o', 'jsonpath={.spec.replicas}'])
          .stdout,
      ).toBe('1');
      // Denied: the Deployment is another Foo's, said as kubectl says a schema error.
      const denied = k(['apply', '-f', '-'], foo('thief', { deploymentName: 'hooked', replicas: 1 }));
      expect(denied.status).toBe(1);
      expect(denied.stderr).toContain(
        'The Foo "thief" is invalid: spec.deploymentName: Duplicate value: "hooked": already the Deployment of Foo "hooked"',
      );
      // Allowed with a warning (a server-side dry run: the webhooks are called, nothing is stored).
      const warned = k(
        ['create', '--dry-run=server', '-f', '-'],
        foo('big', { deploymentName: 'big', replicas: 7 }),
      );
      expect(warned.status).toBe(0);
      expect(warned.stderr).toContain(
        'Warning: spec.replicas: 7 pods of nginx for one Foo; more than 5 is unusual',
      );
      // Read at v1 through the operator's /convert.
      const v1 = k(['get', 'foos.v1.samplecontroller.k8s.io', 'hooked', '-o', 'json']);
      expect(JSON.parse(v1.stdout)).toMatchObject({
        apiVersion: 'samplecontroller.k8s.io/v1',
        spec: { deployment: { name: 'hooked', replicas: 1 } },
      });
    } finally {
      child.kill('SIGINT');
    }
    expect(await exited).toBe(0);
  });
});

describe('the live view', () => {
  it('summarises a pino line and an object', () => {
    const line = JSON.stringify({
      level: 30,
      time: Date.UTC(2026, 0, 1, 12, 0, 1),
      pid: 1,
      hostname: 'h',
      controller: 'foo',
      kind: 'Foo',
      namespace: 'default',
      name: 'example-foo',
      reconcileID: 'x',
      deployment: 'example-foo',
      replicas: 2,
      msg: 'created Deployment',
    });
    expect(formatLogLine(line)).toBe(
      '12:00:01 INFO  Foo default/example-foo: created Deployment  deployment=example-foo replicas=2',
    );
    expect(formatLogLine('not json')).toBe('not json');
    expect(
      describeState({
        apiVersion: 'samplecontroller.k8s.io/v1alpha1',
        kind: 'Foo',
        metadata: { name: 'a' },
        spec: { deploymentName: 'a', replicas: 2 },
        status: { availableReplicas: 1 },
      }),
    ).toBe('spec.deploymentName=a spec.replicas=2 status.availableReplicas=1');
  });
});
